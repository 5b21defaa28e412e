"""One start check (flows/start.py): `python -m rlvr.flows.train RUN`, documented as the same as
`rlvr resume RUN`, refuses what the CLI refuses, with the same message, before Prefect starts (run as a module in a
subprocess: tests/integration/test_start_module.py).

Test: pytest tests/unit/checks/test_start.py
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
from rlvr.flows import start as flows_start
from rlvr.flows import train as flows_train
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr.store.locks import ServeInfo, serve_lock, writer_lock
from tests.helpers.run_builder import build_run, damage_a_shard


def _served(root: Path) -> AbstractContextManager:
    return serve_lock(
        root,
        ServeInfo(
            pid=os.getpid(), deployment="rlvr-extend/x", api_url="http://127.0.0.1:1", schedule="every 1s", add_iterations=1
        ),
    )


def _cuda_gone(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], AbstractContextManager]:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    return lambda root: nullcontext()


# (case, run config, stages committed, what to do to the run, what both say)
CASES = [
    ("a damaged shard", {}, 2, lambda mp: damage_a_shard, "sha256"),
    ("a run a schedule trains", {}, 2, lambda mp: _served, "is trained on a schedule by `rlvr serve`"),
    ("a second writer", {}, 2, lambda mp: lambda root: writer_lock(root), f"another rlvr process (pid {os.getpid()}) is writing"),
    ("cuda where there is none", {"update": {"device": "cuda"}}, 2, _cuda_gone, 'update.device = "cuda"'),
]


@pytest.mark.parametrize(("config", "upto", "make", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_flow_entry_refuses_what_the_cli_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, config: dict, upto: int, make, says: str
) -> None:
    import torch

    def never(*args, **kwargs):
        raise AssertionError("a refused run started Prefect")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the cuda run is made where CUDA is
    root = build_run(tmp_path / "run", {"run": {"iterations": 1}, **config}, upto=upto).paths.root
    monkeypatch.setattr(flows_start, "prefect_env", never)
    monkeypatch.setattr(flows_train, "train", never)
    with make(monkeypatch)(root):
        res = CliRunner().invoke(app, ["resume", str(root)])
        assert res.exit_code == 2 and says in " ".join(res.output.split()), res.output
        assert flows_train.main([str(root)]) == 2
    printed = capsys.readouterr().err
    assert printed.startswith("error: ") and says in " ".join(printed.split()), printed


def test_the_flow_entry_starts_nothing_for_a_finished_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    root = build_run(tmp_path / "run", {"run": {"iterations": 1}}).paths.root
    monkeypatch.setattr(flows_train, "train", lambda run_dir: pytest.fail("the flow ran"))
    assert flows_train.main([str(root)]) == 0 and "nothing to do" in capsys.readouterr().out
