"""verify(run, i): the scores of iteration i's rollouts (rlvr.verify: SQL tier, sandbox, math-verify, plug-ins)."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow.compute as pc

from rlvr.progress import progress
from rlvr.schema import PREPARE, ROLLOUT, SCORES, VERIFY, shard_name
from rlvr.stages.base import StageResult, _stage
from rlvr.stages.lineage import stage_inputs, upstream
from rlvr.stages.parts import merge_parts, merged_extra, stage_and_folder
from rlvr.store.commit import Outcome, StageTx, write_table
from rlvr.store.records import CommitRecord
from rlvr.store.run import open_run
from rlvr.verify import scoring

log = logging.getLogger("rlvr")


def verify(run_dir: str | Path, iteration: int, part: int | None = None) -> StageResult:
    """Score rollouts/iteration=i against problems -> scores/iteration=i/ (one DuckDB query). With
    rollout.shards = K > 1: `part` p scores rollout part p's responses (whole groups: a prompt's G
    responses are sampled in one part), so the sandbox's rows spread over the pool like the sampling;
    verify(i) without a part commits the stage from its committed parts."""
    run = open_run(run_dir)
    paths, i, parts = run.paths, iteration, run.config.rollout.shards
    if part is None and parts > 1:
        return merge_parts(run, VERIFY, i, extra=merged_scores)
    stage, out = stage_and_folder(run, VERIFY, i, part)
    inputs = stage_inputs(run, stage, i)
    problems, rollouts = upstream(run, PREPARE, None, f"verify({i})"), upstream(run, ROLLOUT, i, f"verify({i})")
    inside = "" if part is None else str(stage_and_folder(run, ROLLOUT, i, part)[1].relative_to(paths.root))
    total = rollouts.rows if part is None else rollouts.extra["parts"][part]["rows"]

    def body(tx: StageTx) -> Outcome:
        progress(VERIFY, i, done=0, total=total, unit="rows")
        table, stats = scoring.score_with_stats(
            rollouts.parquet_files(paths.root, inside),
            problems.parquet_files(paths.root),
            run.config.verify,
            max_new_tokens=run.config.rollout.max_new_tokens,
            hide=[paths.root],
        )
        n = write_table(table, SCORES, tx.output(out) / shard_name(0))
        progress(VERIFY, i, done=n, total=total, unit="rows")
        correct = sum(table["correct"].to_pylist())
        log.info("%s %d: %d rows, %d correct", stage, i, n, correct)
        return Outcome(n, {"correct": correct, "reward_mean": pc.mean(table["reward"]).as_py(), **stats})

    return _stage(run, stage, i, inputs, body)


def merged_scores(recs: list[CommitRecord]) -> dict:
    """verify(i)'s figures from its parts': every count summed, the mean reward over all rows, and
    the parts (rlvr.stages.parts.merged_extra)."""
    rows = sum(r.rows for r in recs)
    counts = {k for r in recs for k, v in r.extra.items() if isinstance(v, int) and not isinstance(v, bool)}
    out = {k: sum(r.extra.get(k, 0) for r in recs) for k in sorted(counts)}
    mean = sum((r.extra["reward_mean"] or 0.0) * r.rows for r in recs) / rows if rows else None
    return out | {"reward_mean": mean, "parts": merged_extra(recs)["parts"]}
