"""Who may write a run: one writer (`rlvr train`/`resume`/`import`/`rescore`) and one schedule (`rlvr serve`).

Both are an exclusive flock on a file in the run folder holding the holder's pid; the OS drops
the lock when the holder dies (even SIGKILL), so a crashed writer never blocks the next one.
A run on object storage has no flock: its writer holds a lease object instead (rlvr.store.lease);
`rlvr serve` is for local runs only.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from rlvr.store.fs import is_remote
from rlvr.store.lease import writer_lease
from rlvr.store.run import RunError

LOCK_FILE = ".lock"


@contextmanager
def _pid_lock(path: Path, refusal: str) -> Iterator[None]:
    """An exclusive flock on `path` holding this process's pid; another holder is refused with
    `refusal` ({pid} filled with the holder's pid). The OS drops the lock when the holder dies (even SIGKILL)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise RunError(refusal.replace("{pid}", holder)) from None  # not format(): run_dir may hold braces
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


@contextmanager
def writer_lock(run_dir: str | Path) -> Iterator[None]:
    """One writer per run: a second `rlvr train`/`resume` on the same folder fails at once
    instead of interleaving commits. A run on object storage: its lease (rlvr.store.lease)."""
    if is_remote(run_dir):
        with writer_lease(str(run_dir)):
            yield
        return
    path = Path(run_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with _pid_lock(path, f"another rlvr process (pid {{pid}}) is writing {run_dir}; wait for it to finish or stop it"):
        yield


SERVE_LOCK_FILE = ".serve.lock"


SERVE_INFO_FILE = ".serve.json"  # ServeInfo, while `rlvr serve` holds the serve lock (read by `rlvr status`)


class ServeInfo(BaseModel):
    """What `rlvr serve` says about the schedule it serves (SERVE_INFO_FILE): one format, here."""

    deployment: str
    api_url: str
    schedule: str
    pid: int
    add_iterations: int


def _served_by(path: Path) -> str | None:
    """The pid holding the serve lock at `path`, or None when nobody serves the run."""
    if not path.is_file():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # succeeds only when no `rlvr serve` holds it
        return None
    except BlockingIOError:
        return os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
    finally:
        os.close(fd)


def refuse_if_served(run_dir: str | Path) -> None:
    """A manual train/resume while a schedule trains the same run would race it for every stage."""
    if (pid := _served_by(Path(run_dir) / SERVE_LOCK_FILE)) is not None:
        raise RunError(
            f"{run_dir} is trained on a schedule by `rlvr serve` (pid {pid}); stop it (Ctrl-C) before training "
            "the run by hand, or let the schedule add the iterations"
        )


@contextmanager
def serve_lock(run_dir: str | Path, info: ServeInfo) -> Iterator[None]:
    """One schedule per run: held by `rlvr serve` while it serves; released when it exits (even SIGKILL).
    `info` is in SERVE_INFO_FILE while the lock is held (a leftover of a SIGKILL is never read: see serve_info)."""
    refusal = (
        f"{run_dir} already has a schedule: `rlvr serve` (pid {{pid}}) serves it; one schedule per run "
        "(stop that one first to change the schedule)"
    )
    with _pid_lock(Path(run_dir) / SERVE_LOCK_FILE, refusal):
        path = Path(run_dir) / SERVE_INFO_FILE
        path.write_text(info.model_dump_json())
        try:
            yield
        finally:
            path.unlink(missing_ok=True)


def serve_info(run_dir: str | Path) -> dict | None:
    """What `rlvr serve` wrote about its schedule, while it is serving; None otherwise."""
    root = Path(run_dir)
    if _served_by(root / SERVE_LOCK_FILE) is None:
        return None
    try:
        return ServeInfo.model_validate_json((root / SERVE_INFO_FILE).read_text()).model_dump()
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
