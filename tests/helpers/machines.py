"""Several machines on one: a Prefect server, each machine's own folder, and `rlvr worker` processes in them.

Each "machine" is a folder: its working directory (with its own copy of the reward plug-in), its
RLVR_CACHE and its PREFECT_HOME; the machines share only the Prefect API and the run store."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PARITY = "SELECT prompt_id, sample_idx, (sample_idx % 2)::DOUBLE AS score, 'odd sample' AS reason FROM responses"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_prefect_server(home: Path, port: int) -> subprocess.Popen:
    """`prefect server start` on 127.0.0.1:port with its database in `home`; returns once /api/health answers."""
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    env["PREFECT_API_LOG_RETRYABLE_ERRORS"] = "true"  # a 503's cause (a busy SQLite, say) goes to the log
    env.pop("PREFECT_API_URL", None)
    log = (home / f"server-{time.monotonic_ns()}.log").open("w")
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"prefect server did not start; see {log.name}") from None
            time.sleep(0.5)


def machine(tmp_path: Path, name: str) -> Path:
    """A machine's own folder: its working directory, with its copy of the reward plug-in."""
    home = tmp_path / name
    (home / "rewards").mkdir(parents=True)
    (home / "rewards" / "parity.sql").write_text(PARITY)
    return home


def worker_process(home: Path, api: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """`rlvr worker ARGS` as if on machine `home`: its own cwd, cache, PREFECT_HOME and log."""
    own = {"RLVR_CACHE": str(home / "cache"), "PREFECT_HOME": str(home / "prefect"), "PREFECT_API_URL": api}
    log = (home / f"worker-{time.monotonic_ns()}.log").open("w")
    cmd = [sys.executable, "-m", "rlvr.flows.cli", "worker", *args, "--device", "cpu"]
    return subprocess.Popen(
        cmd, cwd=home, env={**os.environ, **own, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def driver_command(home: Path, api: str, run: str, iterations: int, env: dict | None = None) -> tuple[list[str], dict]:
    """`rlvr train placed.toml --run RUN` as the driver on machine `home`: (the command, its environment)."""
    cmd = [sys.executable, "-m", "rlvr.flows.cli", "train", "placed.toml", "--run", run, "--iterations", str(iterations)]
    own = {"PREFECT_API_URL": api, "PREFECT_HOME": str(home / "prefect"), "COLUMNS": "200"}
    return cmd, {**os.environ, **(env or {}), **own}


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminate every process still running (a test's machines), then wait for each."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        p.wait(timeout=30)
