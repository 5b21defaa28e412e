"""Pre-run checks against real models and real disks: a model folder's missing files, chat
template and model_type; free disk for v0 and the first checkpoint; a read-only bind mount and a
small tmpfs (root writes through chmod, so permissions would prove nothing; without mount rights
those tests skip). The other early errors: tests/unit/checks/test_preflight.py."""

from __future__ import annotations

import json
import shutil
from collections import namedtuple
from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks import preflight
from rlvr.checks.preflight import PreflightError
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.errors import DiskSpaceError, RlvrError
from rlvr.schema import PREPARE, RunPaths
from tests.helpers.mounts import mount, read_only, tmpfs
from tests.helpers.output import error_lines, flat, no_prefect
from tests.helpers.run_builder import build_run

runner = CliRunner()


def _copy(model: Path, dest: Path) -> Path:
    shutil.copytree(model, dest)
    return dest


# ---- the model folder -------------------------------------------------------------------------


def test_model_folder_checks_name_the_file_and_the_fix(tmp_path: Path, tiny_model: Path) -> None:
    assert preflight.check_model(tiny_model) == []
    with pytest.raises(PreflightError, match="does not exist"):
        preflight.check_model(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(PreflightError, match="is a file, not a folder"):
        preflight.check_model(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PreflightError, match="has no config.json"):
        preflight.check_model(tmp_path / "empty")

    m = _copy(tiny_model, tmp_path / "m")
    conf = json.loads((m / "config.json").read_text())
    (m / "config.json").write_text(json.dumps({k: v for k, v in conf.items() if k != "model_type"}))
    with pytest.raises(PreflightError, match='config.json has no "model_type"'):
        preflight.check_model(m)
    (m / "config.json").write_text(json.dumps(conf | {"model_type": "llamaz"}))
    with pytest.raises(PreflightError, match="model_type 'llamaz' is unknown"):
        preflight.check_model(m)
    (m / "config.json").write_text("{not json")
    with pytest.raises(PreflightError, match="is not valid JSON"):
        preflight.check_model(m)
    (m / "config.json").write_text(json.dumps(conf))

    (m / "tokenizer.json").write_text("{broken")
    with pytest.raises(PreflightError, match="its tokenizer does not load"):
        preflight.check_model(m)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (m / f).unlink()
    with pytest.raises(PreflightError, match="has no tokenizer"):
        preflight.check_model(m)
    (m / "model.safetensors").unlink()
    with pytest.raises(PreflightError, match="has no weights"):
        preflight.check_model(m)


def test_a_model_without_chat_template_gets_a_note(tmp_path: Path, tiny_model: Path) -> None:
    m = _copy(tiny_model, tmp_path / "m")
    (m / "chat_template.jinja").unlink()
    assert preflight.check_model(m) == [
        f"model.path = {str(m)!r} has no chat template: prompts are given to the model as plain text"
    ]


def test_config_without_model_type_is_one_line_and_leaves_no_run(tmp_path: Path, tiny_model: Path) -> None:
    """Was a 161-line transformers traceback, 15 s into a Prefect task, after the run folder existed."""
    m = _copy(tiny_model, tmp_path / "m")
    conf = json.loads((m / "config.json").read_text())
    (m / "config.json").write_text(json.dumps({k: v for k, v in conf.items() if k != "model_type"}))
    run = tmp_path / "run"
    res = runner.invoke(app, ["train", "--run", str(run), "--set", f'model.path="{m}"'])
    assert res.exit_code == 2 and len(error_lines(res.output)) <= 2 and "model_type" in res.output
    assert not run.exists()
    res = runner.invoke(app, ["train", "--run", str(run), "--set", f'model.path="{tmp_path / "missing"}"'])
    assert res.exit_code == 2 and len(error_lines(res.output)) <= 2 and "does not exist" in res.output
    assert not run.exists()
    # the corrected retry is a new run, not "already holds a run with another config"
    (m / "config.json").write_text(json.dumps(conf))
    fixed = create_or_open(run, Config.model_validate({"model": {"path": str(m)}}), None)
    assert fixed.config.model.path == str(m)


def test_free_disk_for_v0_and_the_first_checkpoint(tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Config.model_validate({"model": {"path": str(tiny_model)}})
    need = 4 * preflight.model_bytes(tiny_model)  # v0 + v1 weights + AdamW's two moments (fp32 files)
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**12, 10**12 - need + 1, need - 1))
    with pytest.raises(DiskSpaceError, match="policy v0 and the first checkpoint need about") as e:
        create_or_open(tmp_path / "run", cfg, None)
    assert f"free on {tmp_path}" in str(e.value) and isinstance(e.value, RlvrError)
    assert not (tmp_path / "run").exists()
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**12, 10**12 - need, need))
    assert create_or_open(tmp_path / "run", cfg, None).paths.config.is_file()


# ---- read-only and full disks ----------------------------------------------------------------


def test_a_read_only_parent_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    with read_only(ro):
        res = runner.invoke(app, ["train", "--run", str(ro / "run")])
        assert res.exit_code == 2 and "is not writable" in res.output and len(error_lines(res.output)) <= 2
    assert not (ro / "run").exists()


def test_resuming_a_finished_run_on_a_read_only_disk_has_nothing_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was a bare OSError (the writer lock could not be created). Now: no Prefect, no lock, exit 0."""
    from rlvr.flows import start as flows_start

    run = build_run(tmp_path / "run", {"run": {"iterations": 2}})
    monkeypatch.setattr(flows_start, "prefect_env", no_prefect)
    before = sorted(p.relative_to(run.paths.root) for p in run.paths.root.rglob("*"))
    with read_only(run.paths.root):
        res = runner.invoke(app, ["resume", str(run.paths.root)])
        assert res.exit_code == 0, res.output
        assert "all 7 stages are committed, nothing to do" in flat(res.output)
        res = runner.invoke(app, ["train", "--run", str(run.paths.root)])
        assert res.exit_code == 0 and "nothing to do" in flat(res.output), res.output
        # with work left, the same disk is refused in one line, naming the first stage to compute
        res = runner.invoke(app, ["train", "--run", str(run.paths.root), "--iterations", "3"])
        assert res.exit_code == 2 and "read-only disk" in res.output and len(error_lines(res.output)) <= 2
    assert sorted(p.relative_to(run.paths.root) for p in run.paths.root.rglob("*")) == before


def test_resume_with_work_left_on_a_read_only_disk_is_one_line(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", {"run": {"iterations": 2}}, upto=5)
    with read_only(run.paths.root):
        res = runner.invoke(app, ["resume", str(run.paths.root)])
    assert res.exit_code == 2 and len(error_lines(res.output)) <= 2
    assert "is not writable (read-only disk or permissions) and 2 stage(s) are still to compute, from verify 1" in flat(
        res.output
    )


def test_a_full_disk_during_a_stage_says_so_and_leaves_nothing_half_written(tmp_path: Path, tiny_model: Path) -> None:
    """prepare on a real 300 KB tmpfs: the problems fit, the 600 KB model does not (ENOSPC)."""
    disk = tmp_path / "disk"
    with tmpfs(disk, "300k"):
        run = create_or_open(disk / "run", Config(), 1)
        with pytest.raises(DiskSpaceError) as e:
            stages.prepare(run.paths.root)
        msg = str(e.value)
        assert msg.startswith(f"prepare failed because the disk holding {run.paths.root} is full")
        assert "[checkpoint] keep_last" in msg and f"rlvr resume {run.paths.root}" in msg and len(msg.splitlines()) == 2
        paths = RunPaths(run.paths.root)
        assert not paths.record(PREPARE, None).exists() and not list(paths.root.rglob(".tmp-*"))
        # more space, and the same run resumes: nothing was left that blocks it
        assert mount("-o", "remount,size=8m", str(disk))
        assert not stages.prepare(run.paths.root).skipped
