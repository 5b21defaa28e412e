"""Child processes of this process: find them all, stop them all (Linux /proc; no psutil needed).

A stage may have children several levels deep: the vLLM worker, torchrun and its ranks, the
math-verify worker processes, bubblewrap sandboxes. When rlvr is told to stop (SIGINT,
SIGTERM), killing only the direct child leaves grandchildren behind (torchrun's ranks keep
running after torchrun is SIGKILLed), so the whole tree is collected first, then signalled.

    kill_tree(descendants(os.getpid()), grace_s=3)

Tests: tests/integration/test_signals.py.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid ...": comm may contain spaces and parentheses, so split at the last ')'
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited while we looked
        parents[int(stat.parent.name)] = int(fields[1])
    return parents


def descendants(pid: int, *, exclude: frozenset[int] = frozenset()) -> list[int]:
    """Every process below pid (children first), leaving out the subtrees rooted at `exclude`."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out, todo = [], [c for c in children.get(pid, []) if c not in exclude]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += [c for c in children.get(p, []) if c not in exclude]
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has stopped; only its parent's wait() is missing


def remove_left_by_gone(parent: Path, prefix: str = "") -> None:
    """Remove the folders in `parent` named `<prefix><pid>-...` whose process is gone (never this
    process's): scratch and working copies that a killed process could not clean up."""
    for folder in parent.glob(f"{prefix}*-*"):
        pid = folder.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def kill_tree(pids: list[int], *, grace_s: float = 3.0) -> list[int]:
    """SIGTERM every pid, wait up to grace_s for them to stop, SIGKILL the rest; returns those
    that had to be killed."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    stubborn = [p for p in pids if alive(p)]
    for pid in stubborn:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return stubborn


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """For Popen(preexec_fn=...): the kernel sends `sig` to the child when its parent dies, even
    by SIGKILL, so a helper server never outlives the rlvr process that started it (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def tied(cmd: list[str]) -> list[str]:
    """`cmd`, started through this module so that it gets SIGTERM when the thread that starts it
    dies, even by SIGKILL (Linux's parent-death signal, which execve keeps). For a child of a
    multi-threaded process, where Popen's preexec_fn may deadlock: the shim sets the signal after
    the fork, in a fresh interpreter, then becomes `cmd`. torchrun passes the SIGTERM on to its ranks,
    so an update's processes do not outlive a worker killed alone."""
    return [sys.executable, "-m", "rlvr.procs", str(os.getpid()), *cmd]


def _exec_tied(argv: list[str]) -> None:
    parent, cmd = int(argv[0]), argv[1:]
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the signal was set: nobody would send it
        raise SystemExit(f"rlvr.procs: the process that started {cmd[0]} is gone")
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    _exec_tied(sys.argv[1:])
