"""What every stage shares: its result, the idempotent commit wrapper, and the upstream checks."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from rlvr.errors import RlvrError
from rlvr.stages.lineage import StageOrderError
from rlvr.store import retention
from rlvr.store.commit import fetch_policy, run_stage
from rlvr.store.records import CommitRecord
from rlvr.store.run import Run

log = logging.getLogger("rlvr")


class ContextLengthError(RlvrError, ValueError):
    """A prompt that does not fit the model's context with rollout.max_new_tokens."""


@dataclass(frozen=True)
class StageResult:
    stage: str
    iteration: int | None
    skipped: bool  # True: a matching commit record existed, nothing was recomputed
    rows: int
    seconds: float  # of the committed attempt (not of this call, when skipped)
    created_at: str

    def as_dict(self) -> dict:
        return asdict(self)


def _stage(run: Run, stage: str, iteration: int | None, inputs: dict, body) -> StageResult:
    """Every stage goes through rlvr.store.commit.run_stage: skip when committed for these inputs, else
    body(tx) writes temporary outputs and returns an Outcome, and the protocol commits it."""
    rec, skipped = run_stage(run.paths, stage, iteration, inputs, body)
    return _result(rec, skipped)


def _result(rec: CommitRecord, skipped: bool) -> StageResult:
    if skipped:
        log.info("%s %s: committed already, skipped", rec.stage, "" if rec.iteration is None else rec.iteration)
    return StageResult(rec.stage, rec.iteration, skipped, rec.rows, rec.seconds, rec.created_at)


def _require_weights(run: Run, version: int, needed_by: str, *, trainer_state: bool = False) -> None:
    """Policy v_version must still be on disk: checkpoint retention may have pruned it. Called in
    a stage's body, so only when the stage must really run (a committed one skips without it). On
    object storage its files are then brought into the working copy (rlvr.store.commit.fetch_policy)."""
    pruned = retention.read_pruned(run.paths).get(version)
    if pruned is not None and (pruned.weights or (trainer_state and pruned.files)):  # v0 never had a trainer state
        what = "weights" if pruned.weights else "trainer state"
        raise StageOrderError(
            f"{needed_by} needs policy v{version}, whose {what} [checkpoint] retention deleted on {pruned.created_at}; "
            "it cannot be recomputed in this run (keep more versions with checkpoint.keep_last / keep_every in new runs)"
        )
    fetch_policy(run.paths, version, trainer_state=trainer_state)
