"""verify(run, i): the scores of iteration i's rollouts (rlvr.verify: SQL tier, sandbox, math-verify, plug-ins)."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow.compute as pc

from rlvr.progress import progress
from rlvr.schema import (
    PREPARE,
    ROLLOUT,
    SCORES,
    VERIFY,
    shard_name,
)
from rlvr.stages.base import StageResult, _stage
from rlvr.stages.lineage import stage_inputs, upstream
from rlvr.store.commit import Outcome, StageTx, write_table
from rlvr.store.run import open_run
from rlvr.verify import scoring

log = logging.getLogger("rlvr")


def verify(run_dir: str | Path, iteration: int) -> StageResult:
    """Score rollouts/iteration=i against problems -> scores/iteration=i/ (one DuckDB query)."""
    run = open_run(run_dir)
    paths, i = run.paths, iteration
    inputs = stage_inputs(run, VERIFY, i)
    problems, rollouts = upstream(run, PREPARE, None, f"verify({i})"), upstream(run, ROLLOUT, i, f"verify({i})")

    def body(tx: StageTx) -> Outcome:
        progress(VERIFY, i, done=0, total=rollouts.rows, unit="rows")
        table, stats = scoring.score_with_stats(
            rollouts.parquet_files(paths.root),
            problems.parquet_files(paths.root),
            run.config.verify,
            max_new_tokens=run.config.rollout.max_new_tokens,
            hide=[paths.root],
        )
        n = write_table(table, SCORES, tx.output(paths.table_dir("scores", i)) / shard_name(0))
        progress(VERIFY, i, done=n, total=rollouts.rows, unit="rows")
        correct = sum(table["correct"].to_pylist())
        log.info("verify %d: %d rows, %d correct", i, n, correct)
        return Outcome(n, {"correct": correct, "reward_mean": pc.mean(table["reward"]).as_py(), **stats})

    return _stage(run, VERIFY, i, inputs, body)
