"""What each stage depends on, and which stages of a run are still to compute.

A stage's inputs (its fingerprint) are the run's config hash and the digests of the commit
records it reads: prepare for the problems, prepare or update(v-1) for policy v (rollout(i) reads
v_max(0, i-k), k = rollout.max_staleness; rlvr.config.plan), rollout(i) and verify(i) for an
update. `pending(run)` asks every stage of the run's plan whether a record with matching inputs is committed, without importing torch or starting anything, so the CLI can say
"nothing to do" (for instance of a finished run on a read-only disk) before Prefect starts.

Tests: tests/unit/store/test_retention.py (pending before and after a run), tests/e2e/test_e2e.py.
"""

from __future__ import annotations

from typing import Any

from rlvr.config.plan import behaviour_version
from rlvr.errors import RlvrError
from rlvr.schema import EVALUATE, PREPARE, ROLLOUT, UPDATE, VERIFY, split_part
from rlvr.store.commit import committed
from rlvr.store.records import CommitRecord, StoreError, read_record, verified_record
from rlvr.store.run import Run


class StageOrderError(RlvrError, RuntimeError):
    """A stage was asked for before a stage it reads was committed (or after its input was pruned)."""


def upstream(run: Run, stage: str, iteration: int | None, needed_by: str) -> CommitRecord:
    """The committed record of an input stage, its files checked against it first (once per
    process; rlvr.store.commit.IntegrityError names the damaged files and the --redo that repairs them)."""
    rec = verified_record(run.paths, stage, iteration)
    if rec is None:
        where = "" if iteration is None else f" of iteration {iteration}"
        raise StageOrderError(f"{needed_by} needs stage {stage}{where} committed first; run `rlvr resume {run.paths.location}`")
    return rec


def policy_record(run: Run, version: int, needed_by: str) -> CommitRecord:
    """The record that committed policy v_version: prepare for v0, update(v-1) after."""
    if version == 0:
        return upstream(run, PREPARE, None, needed_by)
    return upstream(run, UPDATE, version - 1, needed_by)


def rollout_version(run: Run, i: int) -> int:
    """The policy version rollout(i) samples from: v_max(0, i - rollout.max_staleness) (rlvr.config.plan)."""
    return behaviour_version(i, run.config.rollout.max_staleness)


def stage_inputs(run: Run, stage: str, i: int | None) -> dict[str, Any]:
    """The inputs (fingerprinted) of one stage; StageOrderError when an upstream stage is missing. A
    part of a stage (rollout.shards) has the stage's inputs and its place among the parts."""
    base, part, parts = split_part(stage)
    if part is not None:
        return stage_inputs(run, base, i) | {"part": part, "parts": parts}
    name = stage if i is None else f"{stage}({i})"
    inputs: dict[str, Any] = {"config": run.config_hash}
    if stage == PREPARE:
        return inputs
    if stage == EVALUATE:
        return inputs | {"problems": upstream(run, PREPARE, None, name).digest(), "policy": policy_record(run, i, name).digest()}
    if stage == ROLLOUT:
        v = rollout_version(run, i)
        inputs |= {"problems": upstream(run, PREPARE, None, name).digest(), "policy": policy_record(run, v, name).digest()}
        if run.config.rollout.max_staleness:  # the plan's version, in the fingerprint (k = 0: the inputs rlvr always had)
            inputs["policy_version"] = v
        return inputs | _import_digest(run, i, inputs)
    if stage == VERIFY:
        inputs |= {"problems": upstream(run, PREPARE, None, name).digest(), "rollouts": upstream(run, ROLLOUT, i, name).digest()}
        if run.config.verify.rewards:  # a plug-in's source is an input too: editing it scores again
            from rlvr.verify.plugins import source_digest  # only then: it imports DuckDB

            inputs["rewards"] = [source_digest(p) for p in run.config.verify.rewards]
        return inputs
    if stage == UPDATE:
        return inputs | {
            "rollouts": upstream(run, ROLLOUT, i, name).digest(),
            "scores": upstream(run, VERIFY, i, name).digest(),
            "policy": policy_record(run, i, name).digest(),
        }
    raise ValueError(f"unknown stage {stage!r}")


def _import_digest(run: Run, i: int, inputs: dict[str, Any]) -> dict[str, Any]:
    """{"import": digest} when `rlvr import` committed iteration i's rollouts for these very
    inputs (problems and policy): the import is then rollout(i)'s output and is kept. Otherwise {}."""
    rec = read_record(run.paths.record(ROLLOUT, i))
    if rec is None or "import" not in rec.inputs or {k: v for k, v in rec.inputs.items() if k != "import"} != inputs:
        return {}
    return {"import": rec.inputs["import"]}


def pending(run: Run) -> list[tuple[str, int | None]]:
    """The stages of the run's plan (Config.stage_plan) that are not committed for their current inputs."""
    out = []
    for stage, i in run.config.stage_plan():
        try:
            done = committed(run.paths, stage, i, stage_inputs(run, stage, i)) is not None
        except (StageOrderError, StoreError):  # damaged or lost files: not done (resume's check names them)
            done = False
        if not done:
            out.append((stage, i))
    return out
