"""The training flows: prepare, then for each iteration rollout -> verify -> update (with
evaluate(i) on the held-out split before iteration i, and after the last, when eval.every > 0).

With rollout.max_staleness = 0, iteration i+1's rollout starts only after update i has committed:
tasks are called in order and each call returns only when its stage is committed (or raises).
With k = rollout.max_staleness >= 1, rollout(i) samples v_max(0, i-k) (rlvr.config.plan) and the
stages are submitted as Prefect futures that wait for what Config.stage_deps names: the generation
lane (evaluate, rollout, verify) and the trainer lane (update) overlap, one stage each, each stage
still committing on its own. A stage that [placement] places runs on an `rlvr worker` of its pool
instead (rlvr.tasks.placed), and the flow waits for its commit. Rerunning a flow on the same run
folder is `resume`: committed stages skip themselves. Each flow holds the run's writer lock, so
two flows never write one run at once.

- `train(run_dir)`: bring the run to its target iteration count (run.toml: run.iterations).
- `extend(run_dir, add_iterations)`: raise the target, then train; what `rlvr serve` schedules.

    python -m rlvr.flows.train runs/demo   # same as `rlvr resume runs/demo`: the same checks first (flows/start.py)
"""

from __future__ import annotations

import sys

from prefect import Task, flow, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE
from rlvr.flows.lifecycle import reclaim_sigterm
from rlvr.tasks.gang import run_gang
from rlvr.tasks.placed import run_parts, run_placed
from rlvr.tasks.stages import artifact_key, evaluate_task, prepare_task, rollout_task, track_task, update_task, verify_task

from rlvr.checks.start import create_or_open
from rlvr.store.locks import writer_lock
from rlvr.store.run import open_run

SHARDED = ("rollout", "verify", "evaluate")  # stages that rollout.shards splits into parts
TASKS = {"rollout": rollout_task, "verify": verify_task, "update": update_task, "evaluate": evaluate_task}
# a placed stage: run_placed (submit to the pool, wait for the commit) as a task of the flow, so that
# under rollout.max_staleness >= 1 it waits in the flow's thread pool beside the others
wait_placed = task(run_placed, name="placed", cache_policy=NO_CACHE)
in_parts = task(run_parts, name="parts", cache_policy=NO_CACHE)  # rollout.shards = K > 1: K parts, then the stage
on_nodes = task(run_gang, name="nodes", cache_policy=NO_CACHE)  # update.nnodes = N > 1: N workers at once


def _stages(run_dir: str) -> list[dict]:
    # the plan's order is what checkpoint retention relies on: evaluate(i) runs before update(i)
    # commits v_{i+1}, and retention never prunes an eval point whose evaluate is not committed
    config = open_run(run_dir).config
    plan = config.stage_plan()
    bar = create_progress_artifact(
        progress=0.0, key=artifact_key(run_dir, "progress"), description=f"stages of {run_dir} done, this flow run"
    )
    if config.rollout.max_staleness:
        results = _overlapped(run_dir, config, plan, config.stage_deps(), bar)
        track_task(run_dir)
        return results
    results = []
    for k, (stage, i) in enumerate(plan):
        fn, args = where(run_dir, config, stage, i)
        results.append(fn(*args))  # returns when the stage is committed, or raises
        update_progress_artifact(bar, progress=100.0 * (k + 1) / len(plan))
    track_task(run_dir)  # [tracking]: what an earlier process committed and never sent; the tracker closed
    return results


def where(run_dir: str, config, stage: str, i: int | None) -> tuple[Task, tuple]:
    """Where a stage runs, decided here only: the task that runs it and its arguments. In this
    process (prepare_task, or the stage's task), or, placed ([placement]), on a worker of its pool
    (wait_placed: submitted, watched, resubmitted if its worker dies); a stage in parts
    (rollout.shards > 1) as its parts, here or on the pool, then its commit (in_parts); the update on
    several workers of its pool at once (update.nnodes > 1: on_nodes)."""
    pool = config.placement.pool(stage)
    if stage in SHARDED and config.rollout.shards > 1:
        return in_parts, (run_dir, stage, i, pool, config.rollout.shards)
    if stage == "update" and config.update.nnodes > 1:
        return on_nodes, (run_dir, stage, i, pool, config.update.nnodes)
    if pool is not None:
        return wait_placed, (run_dir, stage, i, pool)
    return (prepare_task, (run_dir,)) if i is None else (TASKS[stage], (run_dir, i))


def _overlapped(run_dir: str, config, plan: list[tuple], deps: dict[tuple, list[tuple]], bar) -> list[dict]:
    """rollout.max_staleness >= 1: every stage submitted at once (Prefect's thread pool), each
    waiting for the stages Config.stage_deps names, so rollout(i+1) and verify(i+1) run while
    update(i) trains. Submitted in plan order, every stage waits only for earlier ones, so the
    pool's first-in-first-out queue never holds a stage whose inputs cannot come."""
    futures: dict[tuple, object] = {}
    for stage, i in plan:
        fn, args = where(run_dir, config, stage, i)
        futures[(stage, i)] = fn.submit(*args, wait_for=[futures[d] for d in deps[(stage, i)]])
    results = []
    for k, key in enumerate(plan):
        results.append(futures[key].result())  # a failed stage raises here; the stages after it never start
        update_progress_artifact(bar, progress=100.0 * (k + 1) / len(plan))
    return results


@flow(name="rlvr-train", flow_run_name="train-{run_dir}", log_prints=True)
def train(run_dir: str) -> list[dict]:
    """Bring the run at run_dir to its target iteration count (run.toml: run.iterations)."""
    reclaim_sigterm()
    with writer_lock(run_dir):
        return _stages(run_dir)


@flow(name="rlvr-extend", flow_run_name="extend-{run_dir}", log_prints=True)
def extend(run_dir: str, add_iterations: int = 1) -> list[dict]:
    """Scheduled training: finish what is pending, then `add_iterations` more iterations."""
    reclaim_sigterm()
    with writer_lock(run_dir):
        current = open_run(run_dir).config.run.iterations
        create_or_open(run_dir, None, current + add_iterations)
        return _stages(run_dir)


def main(argv: list[str]) -> int:
    """`python -m rlvr.flows.train RUN`: the checks `rlvr resume` runs (rlvr.flows.start), then the
    flow. A refusal is one line on stderr and exit 2, as the CLI's."""
    from rlvr.flows.start import check_start

    from rlvr.errors import RlvrError

    if len(argv) != 1:
        print("usage: python -m rlvr.flows.train RUN", file=sys.stderr)
        return 2
    try:
        todo = check_start(argv[0], note=lambda msg: print(f"note: {msg}", file=sys.stderr))
    except (RlvrError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not todo:
        print(f"run {argv[0]}: every stage is committed, nothing to do")
        return 0
    train(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
