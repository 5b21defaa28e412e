"""`rlvr sql` in a subprocess: a hostile statement is refused fast, and Ctrl-C (SIGINT) cancels a
runaway query. The read-only guarantees in-process: tests/unit/views/test_sql_readonly.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr.schema import RunPaths
from tests.helpers.rows import RUNAWAY, sql_store


@pytest.fixture()
def store(tmp_path: Path) -> RunPaths:
    return sql_store(tmp_path)


def _ctrl_c_in_child() -> None:
    """preexec_fn: the child starts with SIGINT at its default, so Python installs its Ctrl-C handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_cli_refuses_fast_and_ctrl_c_cancels_a_query(store: RunPaths, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    cli = [sys.executable, "-m", "rlvr.flows.cli", "sql", str(store.root)]
    t0 = time.perf_counter()
    ok = subprocess.run([*cli, "SELECT count(*) AS n FROM rollouts"], env=env, capture_output=True, text=True, cwd=tmp_path)
    accepted = time.perf_counter() - t0
    assert ok.returncode == 0 and "3000" in ok.stdout
    t0 = time.perf_counter()
    bad = subprocess.run([*cli, "INSTALL httpfs"], env=env, capture_output=True, text=True, cwd=tmp_path)
    refused = time.perf_counter() - t0
    assert bad.returncode == 2 and "INSTALL is refused" in bad.stderr
    assert refused < accepted + 0.5, (refused, accepted)  # no torch import on the refusal path

    proc = subprocess.Popen(
        [*cli, RUNAWAY, "--timeout", "600"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        preexec_fn=_ctrl_c_in_child,
    )
    time.sleep(max(3.0, 2 * accepted))  # well inside the query
    assert proc.poll() is None
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert time.perf_counter() - t0 < 3.0
    assert proc.returncode == 130 and "query cancelled" in stderr, stderr
