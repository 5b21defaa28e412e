"""Early, clean errors: a run is checked before its folder is created and before Prefect starts;
user errors are one or two lines; a full disk is recognised through the exception chain. Real
models and real read-only and full disks: tests/integration/test_preflight_disk_and_model.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr.errors import DiskSpaceError
from tests.helpers.output import error_lines, flat, no_prefect
from tests.helpers.run_builder import build_run

runner = CliRunner()


# ---- the model folder -------------------------------------------------------------------------


def test_resume_of_a_run_that_failed_before_prepare_checks_its_model_first(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", {"run": {"iterations": 1}}, upto=0)
    data = run.paths.config.read_text().replace('path = ""', 'path = "/nowhere"')
    assert data != run.paths.config.read_text()
    import tomllib

    from rlvr.config import hash_data

    body = data.split("\n\n", 1)[1]
    run.paths.config.write_text(f"# config_hash = {hash_data(tomllib.loads(body))}\n\n{body}")
    res = runner.invoke(app, ["resume", str(run.paths.root)])
    assert res.exit_code == 2 and "model.path = '/nowhere' does not exist" in res.output
    assert len(error_lines(res.output)) <= 2


def test_task_data_is_checked_before_the_run_folder_exists(tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["train", "--run", str(tmp_path / "run"), "--set", "task.name=logic", "--set", "task.n_train=100000"]
    )
    assert res.exit_code == 2 and "task.n_train" in res.output and len(error_lines(res.output)) <= 2
    assert not (tmp_path / "run").exists()


# ---- read-only and full disks ----------------------------------------------------------------


def test_full_disk_is_recognised_through_the_exception_chain() -> None:
    import errno

    from rlvr.store.commit import FULL_DISK_BYTES, disk_full

    plenty = 10 * FULL_DISK_BYTES
    assert disk_full(OSError(errno.ENOSPC, "No space left on device"), plenty)
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise RuntimeError("writing the shard failed") from inner
    except RuntimeError as outer:
        assert disk_full(outer, plenty)
    # torch.save says only this when the disk fills; with the disk all but full, that is the cause
    torch_says = RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 883392 vs 883280")
    assert disk_full(torch_says, FULL_DISK_BYTES - 1) and not disk_full(torch_says, plenty)
    assert not disk_full(ValueError("a bug"), plenty)


def test_a_bug_is_one_line_with_the_log_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import typer
    from rlvr.flows.cli.errors import bug

    monkeypatch.setenv("RLVR_CACHE", str(tmp_path))
    try:
        raise KeyError("policy_version")
    except KeyError as exc:
        with pytest.raises(typer.Exit) as e:
            bug(exc, "runs/x")
    assert e.value.exit_code == 1
    out = flat(capsys.readouterr().err)
    logs = list((tmp_path / "logs").glob("rlvr-*.log"))
    assert len(logs) == 1 and "Traceback" in logs[0].read_text() and "KeyError: 'policy_version'" in logs[0].read_text()
    assert out.startswith("internal error (KeyError: 'policy_version'); full traceback in") and str(logs[0]) in out
    assert "rlvr resume runs/x" in out and "Traceback" not in out


def test_prefect_logs_a_user_error_without_its_traceback() -> None:
    import logging
    import sys

    from rlvr.flows.cli.errors import NoUserTracebacks

    def record(exc: BaseException) -> logging.LogRecord:
        try:
            raise exc
        except BaseException:
            return logging.LogRecord("prefect.flow_runs", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())

    user, bug = record(DiskSpaceError("disk full")), record(KeyError("x"))
    assert NoUserTracebacks().filter(user) and user.exc_info is None
    assert NoUserTracebacks().filter(bug) and bug.exc_info is not None


def test_a_second_writer_is_refused_before_prefect_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was a traceback after ~30 s (the lock was first taken inside the flow)."""
    import os

    from rlvr.flows import start as flows_start

    from rlvr.store.locks import writer_lock

    run = build_run(tmp_path / "run", {"run": {"iterations": 1}}, upto=2)
    monkeypatch.setattr(flows_start, "prefect_env", no_prefect)
    with writer_lock(run.paths.root):
        res = runner.invoke(app, ["resume", str(run.paths.root)])
    assert res.exit_code == 2 and f"another rlvr process (pid {os.getpid()}) is writing" in flat(res.output)
    assert len(error_lines(res.output)) <= 2


@pytest.mark.parametrize(
    ("update", "rollout", "noted"),
    [
        ({"bf16": True}, {"engine": "auto", "vllm_dtype": "float32"}, "rollout.vllm_dtype = 'float32'"),
        ({"bf16": True}, {"engine": "transformers", "vllm_dtype": "bfloat16"}, "the transformers engine samples in float32"),
        ({"bf16": True}, {"engine": "vllm", "vllm_dtype": "bfloat16"}, None),  # bf16 on both sides: learned
        ({"bf16": False}, {"engine": "auto", "vllm_dtype": "float32"}, None),
    ],
)
def test_a_bf16_trainer_with_a_float32_sampler_gets_a_note(update: dict, rollout: dict, noted: str | None) -> None:
    from rlvr.checks.preflight import check_precision
    from rlvr.config import Config

    cfg = Config.model_validate({"update": update, "rollout": rollout})
    notes = check_precision(cfg)
    assert (notes == []) if noted is None else (len(notes) == 1 and noted in notes[0] and "collapsed learning" in notes[0])
