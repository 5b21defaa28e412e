"""The `rlvr` CLI in a subprocess, as a user runs it (the end-to-end and worker tests)."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    """`rlvr ARGS` in a subprocess of its own (its own session, so a kill reaches only it)."""
    return subprocess.run(
        [sys.executable, "-m", "rlvr.flows.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        start_new_session=True,
    )
