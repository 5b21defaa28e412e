"""`python -m rlvr.flows.train RUN` (a subprocess) runs the same start checks as the CLI: a damaged
shard stops it with one line on stderr and exit code 2. The checks in-process:
tests/unit/checks/test_start.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.run_builder import build_run, damage_a_shard


def test_python_m_rlvr_flows_train_runs_the_checks(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run", {"run": {"iterations": 1}}, upto=2).paths.root
    damage_a_shard(root)
    res = subprocess.run([sys.executable, "-m", "rlvr.flows.train", str(root)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and res.stderr.startswith("error: ") and "sha256" in res.stderr, res.stderr
