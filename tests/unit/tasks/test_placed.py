"""tasks/placed.py's submissions: the parts of a stage, submitted from threads of their own, reach the Prefect
API one at a time (on SQLite two inserts that meet cost one of them a 2 s retry; bench/placed.py)."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from rlvr.tasks import placed


class _CountingTask:
    """Stands in for the Prefect task object _submit builds, counting how many submit at once."""

    def __init__(self) -> None:
        self.lock, self.now, self.most, self.calls = threading.Lock(), 0, 0, 0

    def with_options(self, **_: object) -> _CountingTask:
        return self

    def apply_async(self):
        with self.lock:
            self.now += 1
            self.most, self.calls = max(self.most, self.now), self.calls + 1
        time.sleep(0.05)  # an API round trip: long enough for the other threads to arrive meanwhile
        with self.lock:
            self.now -= 1
        return type("Future", (), {"task_run_id": uuid.uuid4()})()


def test_parts_submitted_from_threads_reach_the_api_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    task = _CountingTask()
    monkeypatch.setattr(placed, "placed_task", lambda stage, pool: task)
    reqs = [placed.StageRequest("/runs/r", f"rollout.part-{p}-of-4", 1, "code") for p in range(1, 5)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(lambda req: placed._submit(req, "gen"), reqs))
    assert task.calls == 4 and len(set(ids)) == 4
    assert task.most == 1, "two submissions were in flight at once"
