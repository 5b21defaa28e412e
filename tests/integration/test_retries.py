"""Retries are for transient errors only (a config or data error fails at once), checked through
Prefect's own retry machinery on a real temporary server."""

from __future__ import annotations

import errno

import duckdb
import pytest
from prefect.states import Failed
from rlvr.tasks.stages import retry_transient

from rlvr.config import ConfigError
from rlvr.errors import is_transient


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (TimeoutError("slow disk"), True),
        (ConnectionResetError(), True),
        (OSError(errno.EIO, "I/O error"), True),
        (duckdb.IOException("read failed"), True),
        (OSError(errno.ENOSPC, "disk full"), False),
        (FileNotFoundError("model"), False),
        (ConfigError("bad"), False),
        (ValueError("bad row"), False),
        (None, False),
    ],
)
def test_transient_classification(exc: BaseException | None, transient: bool) -> None:
    assert is_transient(exc) is transient
    assert retry_transient(None, None, Failed(data=exc)) is transient


def _flaky_stage(first_error: BaseException):
    """A stage function that fails once with `first_error`, then succeeds; it counts its calls."""
    from rlvr.stages.generation import StageResult

    calls: list[int] = []

    def stage(run_dir: str, iteration: int) -> StageResult:
        calls.append(iteration)
        if len(calls) == 1:
            raise first_error
        return StageResult("flaky", iteration, False, 7, 0.0, "now")

    return stage, calls


def test_prefect_retries_a_transient_failure_and_the_stage_succeeds(prefect_api: str) -> None:
    from prefect import flow
    from rlvr.tasks.stages import _stage_task

    stage, calls = _flaky_stage(TimeoutError("the object store blinked"))
    task = _stage_task(stage, "flaky").with_options(retry_delay_seconds=0)

    @flow
    def one_stage() -> dict:
        return task("run", 3)

    assert one_stage()["rows"] == 7
    assert calls == [3, 3]  # failed once, retried by Prefect, succeeded


def test_prefect_does_not_retry_a_user_error(prefect_api: str) -> None:
    from prefect import flow
    from rlvr.tasks.stages import _stage_task

    stage, calls = _flaky_stage(ConfigError("rollout.group_size = 1: set it to 2 or more"))
    task = _stage_task(stage, "flaky").with_options(retry_delay_seconds=0)

    @flow
    def one_stage() -> dict:
        return task("run", 3)

    with pytest.raises(ConfigError, match="group_size"):
        one_stage()
    assert calls == [3]  # failed at once: retrying a config error only delays the message


def test_the_after_commit_hook_runs_only_when_the_stage_committed(prefect_api: str) -> None:
    """update_task publishes the iteration's artifacts through its after_commit hook: after a commit,
    never after a skip (a resumed run's committed iterations publish nothing again)."""
    from prefect import flow
    from rlvr.tasks import stages as tasks
    from rlvr.tasks.stages import _stage_task

    from rlvr.stages import StageResult

    published: list[tuple[str, int]] = []
    results = iter([StageResult("s", 1, False, 7, 0.0, "now"), StageResult("s", 2, True, 7, 0.0, "now")])
    task = _stage_task(lambda run_dir, i: next(results), "s", after_commit=lambda d, i: published.append((d, i)))

    @flow
    def two() -> None:
        task("run", 1)  # committed
        task("run", 2)  # skipped

    two()
    assert published == [("run", 1)]
    hooks = {name: [c.cell_contents for c in getattr(tasks, name).fn.__closure__] for name in ("update_task", "rollout_task")}
    # update's hook publishes the iteration and feeds the tracker; rollout has none
    assert tasks.after_update in hooks["update_task"] and tasks.AFTER_COMMIT["update"] is tasks.after_update
    assert not any(callable(c) and c in tasks.AFTER_COMMIT.values() for c in hooks["rollout_task"])
