"""The writer lock of a run on object storage: a lease object, taken and renewed by conditional writes.

A local run's writer holds an flock, which the OS drops when its holder dies. An object store has no
locks; the writer holds a lease instead: the object `.lock` under the run's prefix, JSON naming the
holder (a random id, host, pid, the machine's boot id, the process's start time) and the time the
lease runs out.

- take: create the object create-only (`If-None-Match: *`). When it exists and is live, refuse,
  naming the holder. When it ran out, or its holder is a process of this very machine that is gone,
  replace it only if it is still the version read (`If-Match: <ETag>`): of two writers taking over
  one lease, one wins and the other is refused.
- renew: a thread rewrites it every ttl/3 with If-Match on the ETag of its own last write. A
  renewal that loses (another writer took the lease over because this one stalled past its expiry)
  marks the lease lost; the holder's next commit is then refused (`check_lease`) before its record
  is created, and so is a commit after the lease ran out unrenewed.
- release: rewrite it as run out (If-Match): the next writer takes it at once.

When a holder dies (SIGKILL, OOM, a lost machine): on the same machine (same boot id) the next
writer sees that the pid is gone, or belongs to a later process, and takes the lease at once, as
with a local flock; from another machine it waits until the lease runs out, `RLVR_LEASE_SECONDS`
(default 60) after the last renewal, and is refused until then with a message saying when. Clocks
of the machines sharing a run should agree to well within that. Whatever happens to the lease, a
commit record is created create-only (rlvr.store.objects), so two writers never both commit one stage.

A Prefect concurrency limit would serialise flow runs that go through one Prefect server only; the
lease also holds against a `rlvr train` on another machine with its own temporary server.

Tests: tests/integration/test_store_s3.py.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.store.fs import Conflict, ObjectStore, object_store

LEASE_KEY = ".lock"
TTL_ENV = "RLVR_LEASE_SECONDS"
DEFAULT_TTL_S = 60.0


class LeaseError(RlvrError, RuntimeError):
    """The run's writer lease is held by another process, or this process lost it."""


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22); None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def ttl_seconds() -> float:
    return float(os.environ.get(TTL_ENV, DEFAULT_TTL_S))


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def live(holder: dict, now: float) -> bool:
    """Does this lease still hold? Not once it ran out, nor when its holder is a process of this
    machine that no longer runs (same boot id, and its pid is gone or started at another time)."""
    if holder.get("expires", 0) <= now:
        return False
    if holder.get("boot") and holder.get("boot") == _boot_id():
        return _start_time(int(holder.get("pid", 0))) == holder.get("start")
    return True


class Lease:
    """This process's hold on one run's writer lease (module docstring)."""

    def __init__(self, store: ObjectStore, ttl: float):
        self.store, self.ttl = store, ttl
        self.id = uuid.uuid4().hex
        self.etag: str | None = None
        self.expires = 0.0
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self, expires: float) -> bytes:
        pid = os.getpid()
        me = {"id": self.id, "host": socket.gethostname(), "pid": pid, "boot": _boot_id(), "start": _start_time(pid)}
        return json.dumps({**me, "expires": expires, "expires_at": _stamp(expires)}).encode()

    def take(self) -> None:
        for _ in range(3):  # a lost race re-reads: the winner's lease is then live and refused
            current, etag = self._read()
            if current is not None and live(current, time.time()):
                raise LeaseError(
                    f"another rlvr process (pid {current.get('pid')} on {current.get('host')}) is writing {self.store.uri}; "
                    f"wait for it to finish or stop it (if it died on another machine, its lease runs out at "
                    f"{current.get('expires_at')} UTC)"
                )
            expires = time.time() + self.ttl
            try:
                obj = self.store.put(LEASE_KEY, self._body(expires), create=current is None, if_match=etag)
            except Conflict:
                continue
            self.etag, self.expires = obj.etag, expires
            self._thread = threading.Thread(target=self._renew, name="rlvr-lease", daemon=True)
            self._thread.start()
            return
        raise LeaseError(f"could not take the writer lease of {self.store.uri}: other writers keep taking it; retry")

    def _read(self) -> tuple[dict | None, str | None]:
        obj = self.store.head(LEASE_KEY)
        if obj is None:
            return None, None
        data = self.store.read(LEASE_KEY)  # newer than obj.etag at worst: then the If-Match below fails
        try:
            return (json.loads(data) if data else {}), obj.etag
        except ValueError:
            return {}, obj.etag  # unreadable: treated as run out (it names no holder)

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            expires = time.time() + self.ttl
            try:
                self.etag = self.store.put(LEASE_KEY, self._body(expires), if_match=self.etag).etag
                self.expires = expires
            except Conflict:
                self.lost = True
                return
            except RlvrError:  # the store did not answer: retried at the next tick, until the lease runs out
                continue

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.lost and self.etag is not None:
            try:
                self.store.put(LEASE_KEY, self._body(0.0), if_match=self.etag)
            except (Conflict, RlvrError):
                pass  # lost meanwhile, or unreachable: it runs out on its own

    def check(self) -> None:
        if self.lost or time.time() >= self.expires:
            raise LeaseError(
                f"this process lost the writer lease of {self.store.uri} (it could not renew it in time, and another "
                "writer may have taken it); nothing more is committed: `rlvr resume` it once the other writer is done"
            )


_HELD: dict[str, Lease] = {}


@contextmanager
def writer_lease(uri: str) -> Iterator[Lease]:
    """Hold the run's writer lease for the duration of the block (refused with LeaseError when held)."""
    lease = Lease(object_store(uri), ttl_seconds())
    lease.take()
    _HELD[lease.store.uri] = lease
    try:
        yield lease
    finally:
        _HELD.pop(lease.store.uri, None)
        lease.release()


def check_lease(uri: str) -> None:
    """Before a commit: refuse when this process held the run's lease and lost it (no lease held: the
    create-only record alone guards the commit, as for a stage function called directly)."""
    if (lease := _HELD.get(uri)) is not None:
        lease.check()
