"""What `rlvr train` / `resume` do around a flow: their own temporary Prefect server, and stopping
within seconds on SIGINT (Ctrl-C) or SIGTERM.

- The temporary server. With no PREFECT_API_URL, Prefect would start a server itself, as a child
  in rlvr's process group: Ctrl-C then reaches the server too, which dies first, and the flow
  spends minutes retrying API calls while it tries to report the interruption; and SIGTERM kills
  rlvr without the atexit hook that stops the server. So rlvr starts the same server (Prefect's
  ephemeral uvicorn app) in its own session, with a parent-death signal, points PREFECT_API_URL
  at it, and stops it after Prefect's own exit hooks have drained their logs and events.
- Signals. The first SIGINT/SIGTERM stops every child process (vLLM worker, torchrun and its
  ranks, verifier workers) except the server, then raises `Stopped` in the main thread: the
  running stage aborts (its temporary outputs are removed; committed stages are untouched),
  Prefect records the flow run as crashed on the still-running server, and the CLI exits with
  128 + the signal number (130, 143). A watchdog ends the process anyway if that takes longer
  than GRACE_S; a second signal ends it at once.

No maths, no SQL: process plumbing only.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rlvr.procs import descendants, die_with_parent, kill_tree

GRACE_S = 15.0  # after the first signal: time for the stage to abort and Prefect to record it


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM asked rlvr to stop. A KeyboardInterrupt, so that Prefect treats it as an
    interruption (crashed run, no retry), never as a task failure to retry."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


class TemporaryServer:
    """Prefect's ephemeral API server (the app Prefect itself would start), in its own session."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout_s: float) -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # prefect's location without importing it: its settings must first see PREFECT_API_URL (ensure_server)
        app_dir = Path(importlib.util.find_spec("prefect").origin).parent.parent
        env = {
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # offline machines: no telemetry errors (unless asked for)
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        }
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "--app-dir",
            str(app_dir),
            "--factory",
            "prefect.server.api.server:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ]
        self.proc = subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=die_with_parent)
        self.url = f"http://127.0.0.1:{port}/api"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the temporary Prefect server exited with code {self.proc.returncode} while starting")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as resp:
                    if resp.status == 200:
                        return self.url
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"the temporary Prefect server did not answer within {timeout_s:.0f}s "
            "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)"
        )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def stop(self) -> None:
        if self.proc is None:
            return
        pids = [self.proc.pid, *descendants(self.proc.pid)]
        kill_tree(pids, grace_s=5)
        self.proc.wait()
        self.proc = None


SERVER = TemporaryServer()


def ensure_server() -> None:
    """Start the temporary server unless PREFECT_API_URL names one. Call before importing prefect's
    flows: the URL goes into the environment, where Prefect's settings read it."""
    if os.environ.get("PREFECT_API_URL") or SERVER.proc is not None:
        return
    timeout = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120"))
    os.environ["PREFECT_API_URL"] = SERVER.start(timeout)
    # registered before Prefect registers its own exit hooks (atexit runs last-in first-out), so the
    # server stops only after Prefect has flushed its logs and events to it
    atexit.register(SERVER.stop)


def _stop_children() -> None:
    kill_tree(descendants(os.getpid(), exclude=frozenset({SERVER.pid} if SERVER.pid else ())), grace_s=3)


def _hard_exit(code: int) -> None:
    _stop_children()
    SERVER.stop()
    os._exit(code)


def exit_now(code: int) -> None:
    """Exit after the exit hooks (Prefect's log and event flush, then the server's stop), skipping the
    interpreter's own teardown, which measured ~5 s after an interrupted torch update."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


_HANDLER: list = []  # the handler of the active stop_on_signals block, if any


def reclaim_sigterm() -> None:
    """Call first thing in a flow body. Prefect's flow engine swaps SIGTERM for its own handler
    during a flow run, which raises in the main thread without stopping children (torchrun's
    ranks outlive it); inside a CLI's stop_on_signals block, rlvr's handler goes back in. Prefect
    restores the handler it replaced when the flow ends. A no-op elsewhere (served flow runs,
    tests), where Prefect's SIGTERM bridge, and its cancellation, stay as they are."""
    if _HANDLER and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _HANDLER[-1])


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within this block, SIGINT and SIGTERM raise Stopped in the main thread (see the module doc)."""
    stopping: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if stopping:  # a second signal: no more waiting
            _hard_exit(128 + signum)
        stopping.append(signum)
        print(f"\nrlvr: {signal.Signals(signum).name}: stopping (committed stages are kept)", file=sys.stderr, flush=True)
        watchdog = threading.Timer(GRACE_S, _hard_exit, args=(128 + signum,))
        watchdog.daemon = True
        watchdog.start()
        _stop_children()  # the main thread may be waiting on one of them: it returns now
        raise Stopped(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    _HANDLER.append(handler)
    try:
        yield
    finally:
        _HANDLER.remove(handler)
        for s, h in previous.items():
            signal.signal(s, h)
