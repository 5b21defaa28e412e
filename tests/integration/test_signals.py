"""SIGTERM and Ctrl-C stop `rlvr train` within seconds and leave no process behind.

The real thing: the CLI in a subprocess with no PREFECT_API_URL (so it starts its temporary
Prefect server), the update under torchrun with 2 ranks. The signal arrives while the ranks run;
then the process tree recorded just before must be gone, the exit code is 128 + signal, the
interrupted stage left no temporary output and the committed stages are intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from rlvr.config import Config
from rlvr.procs import descendants, kill_tree
from rlvr.schema import PREPARE, RunPaths
from rlvr.store.locks import writer_lock
from rlvr.store.records import read_record

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home-signals")  # shared: the server's migrations run once


def _tree(pid: int) -> dict[int, str]:
    out = {}
    for p in psutil.Process(pid).children(recursive=True):
        try:
            out[p.pid] = " ".join(p.cmdline())
        except psutil.Error:
            pass
    return out


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize(("signum", "to_group"), [(signal.SIGTERM, False), (signal.SIGINT, True)], ids=["sigterm", "ctrl-c"])
def test_signal_stops_train_within_seconds_and_leaves_no_process(
    signum: int, to_group: bool, tmp_path: Path, prefect_home: Path, small_config: Config, tiny_model: Path
) -> None:
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["update"] |= {"nproc": 2}
    cfg = tmp_path / "c.toml"
    cfg.write_text(Config.model_validate(data).to_toml())
    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(prefect_home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlvr.flows.cli", "train", str(cfg), "--run", str(run)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 400
        while True:  # wait for the update's two torchrun ranks
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the update never started"
            tree = _tree(proc.pid)
            if sum("rlvr.train.worker" in c and "torch.distributed.run" not in c for c in tree.values()) == 2:
                break
            time.sleep(0.2)
        assert any("uvicorn" in c and "prefect.server" in c for c in tree.values()), tree  # the temporary server

        t0 = time.monotonic()
        os.killpg(proc.pid, signum) if to_group else proc.send_signal(signum)  # Ctrl-C reaches the whole group
        log = proc.communicate(timeout=60)[0]
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            kill_tree([proc.pid, *descendants(proc.pid)])
    print(f"{signal.Signals(signum).name}: exit {proc.returncode} after {elapsed:.1f}s")
    assert proc.returncode == 128 + signum, log[-3000:]
    assert elapsed < 20, f"took {elapsed:.1f}s to stop\n{log[-3000:]}"
    time.sleep(0.5)  # orphans, if any, would still be running now
    left = {pid: cmd for pid, cmd in tree.items() if not _gone(pid)}
    assert not left, f"left running after {signal.Signals(signum).name}: {left}"
    assert f"stopped by {signal.Signals(signum).name}" in log and "rlvr resume" in log

    paths = RunPaths(run.resolve())
    assert all(read_record(paths.record(s, i)) for s, i in ((PREPARE, None), ("rollout", 0), ("verify", 0)))
    assert read_record(paths.record("update", 0)) is None and not paths.policy_dir(1).exists()
    assert not list(paths.root.rglob(".tmp-*")), "the interrupted stage left temporary outputs"
    with writer_lock(paths.root):  # the lock died with the process
        pass


def test_kill_tree_reaches_grandchildren() -> None:
    """A child whose own child ignores SIGTERM: both are found and both stop."""
    code = (
        "import signal, subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "time.sleep(60)']); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        while len(tree := [child.pid, *descendants(child.pid)]) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(tree) == 2 and child.pid in descendants(os.getpid())
        grandchild = tree[1]
        time.sleep(0.3)  # let it install its SIG_IGN
        assert kill_tree(tree, grace_s=1) == [grandchild]  # it needed SIGKILL
        child.wait(timeout=5)
        deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
        while not _gone(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(grandchild)
    finally:
        child.kill()


def _gone(pid: int) -> bool:
    """Exited: no such process, or a zombie nobody reaps (PID 1 of a container may not)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("tie", [True, False], ids=["tied", "untied"])
def test_a_tied_child_dies_with_the_process_that_started_it(tmp_path: Path, tie: bool) -> None:
    """rlvr.procs.tied, as launch_update starts torchrun: the parent SIGKILLed alone, not its group
    (a worker killed by hand, or by the OOM killer), takes its tied child along; an untied child
    lives on (the control: what torchrun did)."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import subprocess, sys, time\nfrom rlvr.procs import tied\n"
        f"cmd = ['sleep', '120']\np = subprocess.Popen(tied(cmd) if {tie} else cmd)\n"
        "print(p.pid, flush=True)\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 30
        while psutil.Process(child).name() != "sleep":  # the shim has set the signal and become `sleep`
            assert time.monotonic() < deadline
            time.sleep(0.05)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(child) == tie
    finally:
        kill_tree([child], grace_s=0)
