"""update(run, i): the GRPO step from v_i to v_{i+1} (rlvr.train), in-process or under torchrun.

In-process with update.warm, the trainer stays in memory between updates (rlvr.train.warm): this
stage names the checkpoint it committed by its record's digest, and the next update reuses the
trainer only when the version it trains was committed with that digest."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rlvr.schema import (
    PREPARE,
    ROLLOUT,
    UPDATE,
    VERIFY,
    shard_name,
)
from rlvr.seeds import derive_seed
from rlvr.stages.base import StageResult, _require_weights, _result
from rlvr.stages.lineage import stage_inputs, upstream
from rlvr.store import retention
from rlvr.store.commit import Outcome, StageTx, maybe_fault, run_stage
from rlvr.store.run import open_run
from rlvr.train import warm as warm_pool
from rlvr.train.update import UpdateSpec, run_update

log = logging.getLogger("rlvr")


def launch_update(spec: UpdateSpec, nproc: int) -> dict:
    """Run the update under torchrun with nproc processes; returns rank 0's stats."""
    with tempfile.TemporaryDirectory(prefix="rlvr-update-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(spec.model_dump_json())
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={nproc}",
            "-m",
            "rlvr.train.worker",
            str(spec_path),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"torchrun update with {nproc} processes failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(spec_path.with_suffix(".stats.json").read_text())


def update(run_dir: str | Path, iteration: int) -> StageResult:
    """One GRPO update of v_i on iteration i's scored rollouts -> policy v_{i+1} + updates/iteration=i/."""
    run = open_run(run_dir)
    cfg, paths, i = run.config, run.paths, iteration
    name = f"update({i})"
    inputs = stage_inputs(run, UPDATE, i)
    rollouts, scores = upstream(run, ROLLOUT, i, name), upstream(run, VERIFY, i, name)
    # torchrun ranks are processes of their own (cold each time); LoRA's PeftModel is not held yet (untested)
    warm = cfg.update.warm and cfg.update.nproc == 1 and not cfg.update.lora_on
    written: list[str] = []

    def body(tx: StageTx) -> Outcome:
        _require_weights(run, i, name, trainer_state=True)
        if cfg.update.kl_beta > 0:
            _require_weights(run, 0, f"{name} (KL reference)")
            upstream(run, PREPARE, None, name)  # checks v0's files against prepare's record, like every file read
        retention.check_free_space(run, i)  # before anything is written, not after an hour of training
        t0 = time.perf_counter()
        spec = UpdateSpec(
            config=cfg,
            iteration=i,
            seed=derive_seed(cfg.run.seed, i, "update", 0),
            policy_in=str(paths.policy_dir(i)),
            reference=str(paths.policy_dir(0)),
            rollout_files=[str(f) for f in rollouts.parquet_files(paths.root)],
            score_files=[str(f) for f in scores.parquet_files(paths.root)],
            policy_out=str(tx.output(paths.policy_dir(i + 1))),
            metrics_out=str(tx.output(paths.table_dir("updates", i)) / shard_name(0)),
            policy_in_id=inputs["policy"],
            reference_id=upstream(run, PREPARE, None, name).digest(),
        )
        written.append(spec.policy_out)
        stats = run_update(spec, warm=warm) if cfg.update.nproc == 1 else launch_update(spec, cfg.update.nproc)
        if stats["sequences"] == 0:
            log.warning("update %d: no group with reward variance; policy unchanged", i)
        log.info(
            "update %d (%s trainer): %d sequences, %d steps on %d process(es), loss %.4f, %.1fs -> policy v%d",
            i,
            "warm" if stats.get("warm") else "cold",
            stats["sequences"],
            stats["steps"],
            stats["world_size"],
            stats["loss"],
            time.perf_counter() - t0,
            i + 1,
        )
        return Outcome(stats["steps"], {"policy_version": i + 1, **stats})

    rec, skipped = run_stage(paths, UPDATE, i, inputs, body)
    if warm and written:  # the trainer this update ended with is now the committed v_{i+1}
        warm_pool.confirm(written[-1], rec.digest())
    # v_{i+1} is committed: older versions retention does not keep can go (never before this point);
    # also when skipped, which finishes a prune that a kill after the commit cut short
    if not skipped:
        maybe_fault(UPDATE, i, "before_prune")
    if pruned := retention.prune(run):
        log.info("update %d: checkpoint retention deleted %d file(s) of older policy versions", i, len(pruned))
    return _result(rec, skipped)
