"""A run whose stages are committed through the real store protocol (rlvr.store.commit, rlvr.stages.lineage)
without any model: empty shards and small stand-in policy folders. For tests of retention, the
pending plan and the CLI's run-level paths, which read records and files but never weights."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import PREPARE, STAGE_TABLE, TABLES, UPDATE, shard_name
from rlvr.stages.lineage import stage_inputs
from rlvr.store.commit import begin_stage, write_table
from rlvr.store.run import Run, open_run

WEIGHTS_BYTES = 4000  # stand-in model.safetensors; its trainer state is twice that


def write_policy(folder: Path, *, trainer_state: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(bytes(WEIGHTS_BYTES))
    if trainer_state:
        (folder / "trainer_state.pt").write_bytes(bytes(2 * WEIGHTS_BYTES))


def commit_stage(run: Run, stage: str, i: int | None) -> None:
    paths = run.paths
    with begin_stage(paths, stage, i, stage_inputs(run, stage, i)) as tx:
        table = STAGE_TABLE[stage]
        write_table([], TABLES[table], tx.output(paths.table_dir(table, i)) / shard_name(0))
        if stage == PREPARE:
            write_policy(tx.output(paths.policy_dir(0)), trainer_state=False)
        if stage == UPDATE:
            write_policy(tx.output(paths.policy_dir(i + 1)), trainer_state=True)
        tx.commit(rows=0, extra={"policy_version": i + 1} if stage == UPDATE else {})


def build_run(root: Path, data: dict, *, upto: int | None = None) -> Run:
    """A run with config `data` whose first `upto` stages of the plan (default: all) are committed.
    Retention is not applied: call rlvr.store.retention.prune."""
    run = create_or_open(root, Config.model_validate(data), None)
    for stage, i in run.config.stage_plan()[:upto]:
        commit_stage(run, stage, i)
    return open_run(root)


def damage_a_shard(root: Path) -> AbstractContextManager:
    """Flip one byte in the middle of a committed rollouts shard (a check must catch it)."""
    shard = next((root / "rollouts").rglob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    return nullcontext()
