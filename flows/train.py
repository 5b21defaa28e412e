"""The training flow: prepare, then for each iteration rollout -> verify -> update.

Iteration i+1's rollout starts only after update i has committed: tasks are called in order
and each call returns only when its stage is committed (or raises). Rerunning the flow on the
same run folder is `resume`: committed stages skip themselves.

    python -m flows.train runs/demo        # same as `rlvr resume runs/demo`
"""

from __future__ import annotations

import sys

from prefect import flow

from rlvr.run import open_run
from tasks.stages import prepare_task, rollout_task, update_task, verify_task


@flow(name="rlvr-train", flow_run_name="train-{run_dir}", log_prints=True)
def train(run_dir: str) -> list[dict]:
    """Bring the run at run_dir to its target iteration count (run.toml: run.iterations)."""
    run = open_run(run_dir)
    results = [prepare_task(run_dir)]
    for i in range(run.config.run.iterations):
        results.append(rollout_task(run_dir, i))
        results.append(verify_task(run_dir, i))
        results.append(update_task(run_dir, i))
    return results


if __name__ == "__main__":
    train(sys.argv[1])
