"""rlvr.verify.pool: jobs answered in order of completion, a job that hangs or kills its worker is
lost with its cause and its worker replaced, the others are answered, and a worker that does not
start is the caller's error. Real spawned processes; each job is a few milliseconds."""

from __future__ import annotations

import os
import time
from contextlib import closing
from multiprocessing.connection import Connection

import pytest

from rlvr.verify.pool import WorkerPool


def _serve(conn: Connection, greeting: str) -> None:
    """Answers ("echo", x) with x, ("sleep", s) after s seconds, ("exit", code) by dying."""
    conn.send(greeting)
    while (msg := conn.recv()) is not None:
        kind, value = msg
        if kind == "sleep":
            time.sleep(value)
        elif kind == "exit":
            os._exit(value)
        conn.send(("pid", os.getpid(), value))


def _pool(size: int, greeting: str = "ready") -> WorkerPool:
    return WorkerPool(
        _serve,
        (greeting,),
        size=size,
        startup_s=60.0,
        ready=lambda msg: msg == "ready",
        startup_error=lambda msg, code: RuntimeError(f"did not start: {msg!r}"),
    )


def _run(pool: WorkerPool, jobs: list[tuple[str, object]], timeout_s: float) -> dict[int, object]:
    with closing(pool.run(len(jobs), lambda i: jobs[i], timeout_s=timeout_s)) as outcomes:
        return {o.index: o for o in outcomes}


def test_every_job_is_answered_and_a_lost_one_costs_only_itself() -> None:
    pool = _pool(2)
    jobs = [("echo", 0), ("sleep", 30), ("echo", 2), ("exit", 3), ("echo", 4), ("echo", 5)]
    t = time.monotonic()
    out = _run(pool, jobs, timeout_s=1.5)
    assert time.monotonic() - t < 20  # the hung job is killed at its deadline, not waited for
    assert sorted(out) == list(range(6))
    assert out[1].lost == "timeout" and out[1].reply is None
    assert out[3].lost == "died" and out[3].exitcode == 3
    assert [out[i].reply[2] for i in (0, 2, 4, 5)] == [0, 2, 4, 5] and all(out[i].lost is None for i in (0, 2, 4, 5))
    assert pool.restarts == 2  # one replacement per lost job


def test_the_replaced_worker_is_a_new_process() -> None:
    pool = _pool(1)
    out = _run(pool, [("echo", 0), ("exit", 1), ("echo", 2)], timeout_s=30)
    assert out[1].lost == "died"
    assert out[0].reply[1] != out[2].reply[1]  # job 2 ran in the replacement


def test_a_worker_that_does_not_start_is_the_callers_error() -> None:
    with pytest.raises(RuntimeError, match="did not start: 'not ready'"):
        _run(_pool(2, greeting="not ready"), [("echo", 0)], timeout_s=5)


def test_no_jobs_start_no_workers() -> None:
    assert _run(_pool(2), [], timeout_s=1) == {}
