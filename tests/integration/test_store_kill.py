"""A stage SIGKILLed mid-write (RLVR_FAULT_AT, in a subprocess) is invisible to every reader,
and a rerun cleans up and commits exactly one shard. The rest of the run store:
tests/unit/store/test_store.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import ROLLOUT, RunPaths
from rlvr.store.commit import FAULT_ENV
from rlvr.views.sql import run_sql
from tests.helpers import ROOT
from tests.helpers.rows import write_rollout


@pytest.fixture()
def run(tmp_path: Path) -> RunPaths:
    return create_or_open(tmp_path / "run", Config(), None).paths


KILLER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from rlvr.schema import ROLLOUT, ROLLOUTS, RunPaths, shard_name
    from rlvr.store.commit import begin_stage, write_table
    from tests.helpers.rows import ROW
    paths = RunPaths(Path(sys.argv[1]))
    with begin_stage(paths, ROLLOUT, 3, {"a": 1}) as tx:
        out = tx.output(paths.table_dir("rollouts", 3))
        write_table([ROW] * 1000, ROLLOUTS, out / shard_name(0))
        tx.commit(rows=1000)
    """
)


@pytest.mark.parametrize("point", ["before_rename", "before_record"])
def test_sigkill_mid_write_is_invisible_and_rerun_cleans_up(run: RunPaths, point: str) -> None:
    env = {**os.environ, FAULT_ENV: f"{ROLLOUT}:3:{point}", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", KILLER, str(run.root)], env=env, capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr  # really killed by SIGKILL
    assert not run.record(ROLLOUT, 3).exists()
    # no reader sees anything: views are built from commit records only
    assert run_sql(run.root, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 0}]
    # a rerun needs no manual cleaning and leaves exactly one committed shard
    write_rollout(run, {"a": 1})
    assert sorted(p.name for p in run.table_root("rollouts").iterdir()) == ["iteration=000003"]
    assert run_sql(run.root, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 1}]
