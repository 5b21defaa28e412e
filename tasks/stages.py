"""Prefect tasks: thin wrappers around the rlvr.stages functions (retries for transient errors, logging, artifacts:
after each update, a markdown summary of the iteration and the run's metrics table, both
computed by rlvr.views.report; after each update and evaluation, the figures sent to the run's
[tracking] backend by rlvr.views.track).

Big data never travels as a task result: tasks take the run folder and an iteration, and
return the small StageResult dict. Resume does not rely on Prefect's cache: the stage
functions skip themselves when their commit record matches (see rlvr/store/commit.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger

from rlvr import stages
from rlvr.errors import is_transient
from rlvr.schema import split_node, split_part
from rlvr.views import report, track

RETRIES = 2
RETRY_DELAY_S = 5


def retry_transient(task, task_run, state) -> bool:
    """Prefect retry_condition_fn: retry only what rlvr.errors calls transient."""
    exc = state.data if isinstance(state.data, BaseException) else None
    return is_transient(exc)


def call_stage(fn, name: str, run_dir: str, iteration: int, *, after_commit: Callable[[str, int], None] | None = None) -> dict:
    """Stage `fn(run_dir, iteration)`, logged; `after_commit(run_dir, iteration)` runs when the stage
    really committed (not when a matching commit made it skip). Inside a Prefect task run: the local
    tasks below, and a placed stage's task on an `rlvr worker` (rlvr.tasks.placed)."""
    result = fn(run_dir, iteration)
    get_run_logger().info(
        "%s %s: %s, %d rows, %.2fs",
        name,
        iteration,
        "skipped (committed)" if result.skipped else "committed",
        result.rows,
        result.seconds,
    )
    if after_commit is not None and not result.skipped:
        after_commit(run_dir, iteration)
    return result.as_dict()


def _stage_task(fn, name: str, *, after_commit: Callable[[str, int], None] | None = None):
    """A Prefect task running stage `fn(run_dir, iteration)` in this process (call_stage)."""

    @task(
        name=name,
        retries=RETRIES,
        retry_delay_seconds=RETRY_DELAY_S,
        retry_condition_fn=retry_transient,
        cache_policy=NO_CACHE,
        task_run_name=name + "-{iteration}",
    )
    def run_stage(run_dir: str, iteration: int) -> dict:
        return call_stage(fn, name, run_dir, iteration, after_commit=after_commit)

    return run_stage


def artifact_key(run_dir: str, what: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    slug = re.sub(r"[^a-z0-9]+", "-", Path(run_dir).resolve().name.lower()).strip("-") or "run"
    return f"rlvr-{slug}-{what}"


def publish_iteration(run_dir: str, iteration: int) -> None:
    """After an update commits: the iteration's markdown summary, and the metrics table of every
    iteration so far (one key per run: its versions are the run's history)."""
    data = report.collect(run_dir, responses=0)
    create_markdown_artifact(
        key=artifact_key(run_dir, f"iteration-{iteration}"),
        markdown=report.iteration_markdown(data, iteration),
        description=f"rlvr iteration {iteration} of {run_dir}",
    )
    create_table_artifact(
        key=artifact_key(run_dir, "metrics"),
        table=report.iteration_rows(data),
        description=f"rlvr metrics per iteration of {run_dir}",
    )


def send_to_tracker(run_dir: str, iteration: int | None = None) -> None:
    """After an update or an evaluation commits (of `iteration`; every part not sent yet goes, whichever
    iteration it is of): what the run's [tracking] backend has not had yet.
    A tracker that fails (a server down) does not stop training: it is a warning, and the next
    commit, or `rlvr track`, sends what it missed (the tracking state says what was sent)."""
    try:
        result = track.sync(run_dir)
    except Exception as err:  # training goes on without the tracker; the warning says how to catch up
        get_run_logger().warning("tracking: %s; training goes on; `rlvr track %s` sends what was missed", err, run_dir)
        return
    if result.sent:
        get_run_logger().info("tracking: sent %s to %s", ", ".join(result.sent), result.target.label)


def after_update(run_dir: str, iteration: int) -> None:
    publish_iteration(run_dir, iteration)
    send_to_tracker(run_dir, iteration)


def call_prepare(run_dir: str) -> dict:
    result = stages.prepare(run_dir)
    get_run_logger().info("prepare: %s, %d problems", "skipped (committed)" if result.skipped else "committed", result.rows)
    return result.as_dict()


@task(
    name="prepare", retries=RETRIES, retry_delay_seconds=RETRY_DELAY_S, retry_condition_fn=retry_transient, cache_policy=NO_CACHE
)
def prepare_task(run_dir: str) -> dict:
    return call_prepare(run_dir)


STAGE_FUNCTIONS = {"rollout": stages.rollout, "verify": stages.verify, "update": stages.update, "evaluate": stages.evaluate}
AFTER_COMMIT = {"update": after_update, "evaluate": send_to_tracker}  # the iteration's artifacts, the tracker

rollout_task = _stage_task(stages.rollout, "rollout")
verify_task = _stage_task(stages.verify, "verify")
update_task = _stage_task(stages.update, "update", after_commit=AFTER_COMMIT["update"])  # the iteration's artifacts, the tracker
evaluate_task = _stage_task(stages.evaluate, "evaluate", after_commit=AFTER_COMMIT["evaluate"])


def call_any(stage: str, run_dir: str, iteration: int | None, gang: str = "") -> dict:
    """A stage in this process, by name (what a placed stage's worker runs): prepare, stage(run, i)
    with its after-commit hook, as the stage's own task runs it, a part of one ('rollout.part-1-of-2':
    rollout(run, i, part=0)), or a node of an update on several machines ('update.node-2-of-2', of the
    attempt `gang`: rlvr.tasks.gang)."""
    if iteration is None:
        return call_prepare(run_dir)
    if split_node(stage)[1] is not None:
        from rlvr.tasks.gang import run_node  # (gang builds on placed, which imports this module)

        return run_node(stage, run_dir, iteration, gang)
    base, part, _ = split_part(stage)
    fn = STAGE_FUNCTIONS[base] if part is None else partial(STAGE_FUNCTIONS[base], part=part)
    return call_stage(fn, stage, run_dir, iteration, after_commit=AFTER_COMMIT.get(stage))


@task(name="track", cache_policy=NO_CACHE)
def track_task(run_dir: str) -> None:
    """At the end of a flow: send what the tracker still lacks (parts committed by an earlier process
    that it never got), then close the tracker (the W&B session of this process)."""
    try:
        send_to_tracker(run_dir)
    finally:
        track.close_trackers()
