"""A stage in K parts (rollout.shards): which prompts a part takes, and the stage's commit once every
part is committed.

Part p of K (0-based) is a stage of its own, `rollout.part-{p+1}-of-{K}` (rlvr.schema.part_stage): its
inputs are the stage's plus its place (rlvr.stages.lineage), it writes into its own folder under the
stage's (`rollouts/iteration=000003/part-1-of-2/`) and commits through the one commit path like any
stage, so any worker may run it, a killed one is redone from its inputs, and a committed one is
skipped. The stage itself is committed by merge_parts: a record that lists every part's files as
their records list them (StageTx.adopt: nothing is copied or moved) and names the parts and where
each ran. Readers (the next stage, `rlvr sql`) read the stage's record only, so they see all of the
parts or none.

Tests: tests/unit/stages/test_parts.py, tests/e2e/test_shards.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.schema import STAGE_TABLE, part_folder, part_stage
from rlvr.stages.base import StageResult, _stage
from rlvr.stages.lineage import StageOrderError, stage_inputs
from rlvr.store.commit import Outcome, StageTx, committed
from rlvr.store.records import CommitRecord
from rlvr.store.run import Run

SUMMED = ("tokens",)  # a part's figures that add up over the parts
SLOWEST = ("generation_seconds", "engine_start_seconds", "weight_load_seconds")  # that the slowest part sets


def part_prompts(chosen: list[str], part: int, parts: int) -> list[str]:
    """Part `part` of `parts`: the prompt ids at positions part, part + parts, ... in id order. Balanced
    (sizes differ by at most one), and a function of the ids alone."""
    return sorted(chosen)[part::parts]


def stage_and_folder(run: Run, stage: str, i: int, part: int | None) -> tuple[str, Path]:
    """The name and output folder of stage(i), or of its part `part`: 'rollout.part-1-of-2' writing
    into rollouts/iteration=i/part-1-of-2/."""
    folder = run.paths.table_dir(STAGE_TABLE[stage], i)
    if part is None:
        return stage, folder
    parts = run.config.rollout.shards
    return part_stage(stage, part, parts), folder / part_folder(part, parts)


def merge_parts(run: Run, stage: str, i: int, extra: Callable[[list[CommitRecord]], dict[str, Any]] | None = None) -> StageResult:
    """Commit stage(i) from its committed parts; StageOrderError naming the parts still missing. The
    record's extra is extra(parts' records), by default merged_extra."""
    parts = run.config.rollout.shards

    def body(tx: StageTx) -> Outcome:
        recs: list[CommitRecord] = []
        missing: list[str] = []
        for p in range(parts):
            name = part_stage(stage, p, parts)
            rec = committed(run.paths, name, i, stage_inputs(run, name, i))
            recs.append(rec) if rec is not None else missing.append(name)
        if missing:
            raise StageOrderError(
                f"{stage}({i}) is committed once all {parts} of its parts are; not committed yet: {', '.join(missing)}. "
                f"`rlvr resume {run.paths.location}` runs them"
            )
        for rec in recs:
            tx.adopt(rec.outputs)
        return Outcome(sum(r.rows for r in recs), (extra or merged_extra)(recs))

    return _stage(run, stage, i, stage_inputs(run, stage, i), body)


def merged_extra(recs: list[CommitRecord]) -> dict[str, Any]:
    """The stage record's extra from its parts': what they share (the policy version, the engine) from
    the first, sums and the slowest part's seconds, and one entry a part: its stage, rows, seconds and
    the worker that made it."""
    out = {k: v for k, v in recs[0].extra.items() if k not in SUMMED + SLOWEST + ("rounds", "tokens_per_s")}
    out |= {k: sum(r.extra[k] for r in recs) for k in SUMMED if k in recs[0].extra}
    out |= {k: max(r.extra[k] for r in recs) for k in SLOWEST if k in recs[0].extra}
    if "tokens" in out:
        out["tokens_per_s"] = round(out["tokens"] / max(out.get("generation_seconds", 0.0), 1e-9), 1)
    out["parts"] = [
        {"stage": r.stage, "rows": r.rows, "seconds": r.seconds, "tokens": r.extra.get("tokens", 0), "worker": r.worker}
        for r in recs
    ]
    return out
