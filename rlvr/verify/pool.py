"""One pool of spawned worker processes, one job at a time each, with a deadline per job: the Python
tiers that run code they cannot trust to return (rlvr.verify.math: math-verify; rlvr.verify.plugins:
the user's reward functions) both run on it.

    pool = WorkerPool(serve, (arg,), size=2, startup_s=120.0, ready=lambda m: m == "ready", startup_error=...)
    with contextlib.closing(pool.run(len(jobs), lambda i: (i, jobs[i]), timeout_s=5.0)) as outcomes:
        for out in outcomes:   # Outcome(index, reply) as each job finishes, or lost = "died" | "timeout"
            ...

`serve(conn, *args)` runs in each process (spawned: the parent holds DuckDB and torch threads): it
sends one first message (what `ready` accepts means it is ready; anything else, or nothing within
startup_s, is the `startup_error` the pool raises), then answers each message it receives with one
reply; None stops it. What the pool decides: a job whose worker dies, or that outlives timeout_s,
is lost (its worker killed and replaced, `restarts` counted) and the other jobs go on; an idle
worker found dead is replaced before it gets a job. What it does not decide: what a reply or a lost
job means (the caller's verdict), and it reads nothing from a worker but its pickled replies.

Test: tests/integration/test_pool.py (deadline, death, replacement, start-up failure), and through its users
tests/unit/verify/test_mathcheck.py and tests/unit/verify/test_plugins.py.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

GRACE_S = 5.0  # a worker asked to stop has this long to exit before it is killed


@dataclass(frozen=True)
class Outcome:
    """What became of job `index`: its worker's reply, or lost ("died", with the exit code, or "timeout")."""

    index: int
    reply: Any = None
    lost: str | None = None
    exitcode: int | None = None


class _Worker:
    """One process and the job it is working on."""

    def __init__(self, ctx: mp.context.BaseContext, target: Callable[..., None], args: tuple) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=target, args=(child, *args), daemon=True)
        self.proc.start()
        child.close()
        self.job: int | None = None
        self.deadline = 0.0

    def first_message(self, timeout_s: float) -> Any:
        """Its first message, or None when none came within timeout_s (or it died first)."""
        try:
            return self.conn.recv() if self.conn.poll(timeout_s) else None
        except (EOFError, OSError):  # it died while starting; the caller reports its exit code
            return None

    def give(self, job: int, message: Any, deadline: float) -> None:
        self.job, self.deadline = job, deadline
        self.conn.send(message)

    def stop(self, *, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except OSError:  # already gone: joining below is all that is left
                kill = True
        if kill:
            self.proc.kill()
        self.proc.join(timeout=GRACE_S)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


class WorkerPool:
    """`size` processes running target(conn, *args); `run` hands them jobs. See the module docstring."""

    def __init__(
        self,
        target: Callable[..., None],
        args: tuple,
        *,
        size: int,
        startup_s: float,
        ready: Callable[[Any], bool],
        startup_error: Callable[[Any, int | None], Exception],
    ) -> None:
        if size < 1:
            raise ValueError(f"WorkerPool size = {size}: must be >= 1")
        self.target, self.args, self.size, self.startup_s = target, args, size, startup_s
        self.ready, self.startup_error = ready, startup_error
        self.restarts = 0
        self._ctx = mp.get_context("spawn")  # no fork: the parent holds DuckDB and torch threads

    def _started(self, w: _Worker) -> _Worker:
        """w once it said it is ready; else it is killed and startup_error raised (not any job's fault)."""
        msg = w.first_message(self.startup_s)
        if msg is not None and self.ready(msg):
            return w
        w.stop(kill=True)
        raise self.startup_error(msg, w.proc.exitcode)

    def _replace(self, workers: list[_Worker], k: int) -> None:
        workers[k].stop(kill=True)
        workers[k] = self._started(_Worker(self._ctx, self.target, self.args))
        self.restarts += 1

    def run(self, count: int, message: Callable[[int], Any], *, timeout_s: float) -> Iterator[Outcome]:
        """Jobs 0..count-1 in order, `message(i)` sent for job i, each under a deadline of timeout_s;
        one Outcome per job as it finishes. The workers start (all, then each is waited for) when the
        first outcome is asked for and are stopped when the iterator ends or is closed (use
        contextlib.closing, so that an exception in the caller's loop stops them at once)."""
        todo = list(range(count))[::-1]
        workers: list[_Worker] = []
        try:
            workers = [_Worker(self._ctx, self.target, self.args) for _ in range(min(self.size, count))]
            for w in workers:
                self._started(w)
            while todo or any(w.job is not None for w in workers):
                for k, w in enumerate(workers):
                    if w.job is None and todo:
                        if not w.proc.is_alive():  # died between jobs: replace it before giving it one
                            self._replace(workers, k)
                        i = todo.pop()
                        workers[k].give(i, message(i), deadline=time.monotonic() + timeout_s)
                busy = [w for w in workers if w.job is not None]
                ready = wait(
                    [w.conn for w in busy] + [w.proc.sentinel for w in busy],
                    timeout=max(0.0, min(w.deadline for w in busy) - time.monotonic()),
                )
                for k, w in enumerate(workers):
                    if w.job is None:
                        continue
                    if w.conn in ready:
                        try:
                            reply = w.conn.recv()
                        except (EOFError, OSError):  # died after the job was sent; the branch below says so
                            pass
                        else:
                            job, w.job = w.job, None
                            yield Outcome(job, reply)
                            continue
                    if w.proc.sentinel in ready or not w.proc.is_alive():
                        w.proc.join()
                        out = Outcome(w.job, lost="died", exitcode=w.proc.exitcode)
                    elif time.monotonic() >= w.deadline:
                        out = Outcome(w.job, lost="timeout")
                    else:
                        continue
                    self._replace(workers, k)  # the lost job's worker is killed first
                    yield out
        finally:
            for w in workers:
                w.stop(kill=w.job is not None)
