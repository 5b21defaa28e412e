"""update(run, i): the GRPO step from v_i to v_{i+1} (rlvr.train), in-process or under torchrun.

In-process with update.warm, the trainer stays in memory between updates (rlvr.train.warm): this
stage names the checkpoint it committed by its record's digest, and the next update reuses the
trainer only when the version it trains was committed with that digest."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.procs import tied
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
from rlvr.store.commit import Outcome, StageTx, committed, maybe_fault, run_stage
from rlvr.store.run import open_run
from rlvr.train import warm as warm_pool
from rlvr.train.update import UpdateSpec, run_update

log = logging.getLogger("rlvr")


@dataclass(frozen=True)
class Node:
    """This machine's place in an update on several (update.nnodes): its rank among the nodes, and the
    endpoint of node 0's rendezvous store (torchrun's static rendezvous: node ranks are given, so node 0
    holds global rank 0, which writes the checkpoint that node 0 commits). `aborted()` is polled while
    torchrun runs: true when the driver has given up on this gang (another node was lost)."""

    rank: int
    nodes: int
    addr: str
    port: int
    aborted: Callable[[], bool] = lambda: False


class GangAborted(RlvrError, RuntimeError):
    """This node's update was stopped because the driver gave up on its gang (update.nnodes)."""


def launch_update(spec: UpdateSpec, nproc: int, node: Node | None = None) -> dict:
    """Run the update under torchrun with nproc processes (on each node, with `node`); returns global
    rank 0's stats ({} on a node that does not hold it)."""
    if node is None:
        where = ["--standalone"]
    else:  # static rendezvous at node 0's endpoint; gloo's and torchrun's own timeouts end a gang that lost a node
        where = [f"--nnodes={node.nodes}", f"--node-rank={node.rank}", f"--master-addr={node.addr}", f"--master-port={node.port}"]
    with tempfile.TemporaryDirectory(prefix="rlvr-update-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(spec.model_dump_json())
        cmd = [sys.executable, "-m", "torch.distributed.run", *where, f"--nproc-per-node={nproc}", "-m", "rlvr.train.worker"]
        err_path = Path(tmp) / "stderr.txt"
        with err_path.open("w") as err:
            # (in this process group: a worker killed with its group takes torchrun and its ranks along)
            # tied: a worker killed alone (not its group) takes torchrun along too
            proc = subprocess.Popen(tied([*cmd, str(spec_path)]), stdout=subprocess.DEVNULL, stderr=err)
            while True:
                try:
                    proc.wait(timeout=1.0)
                    break
                except subprocess.TimeoutExpired:
                    if node is not None and node.aborted():
                        _stop(proc)
                        raise GangAborted(
                            f"update node {node.rank + 1} of {node.nodes}: the driver gave up on this gang"
                        ) from None
        if proc.returncode != 0:
            who = f"{nproc} processes" if node is None else f"node {node.rank + 1} of {node.nodes} ({nproc} processes)"
            raise RuntimeError(f"torchrun update on {who} failed (exit {proc.returncode}):\n{err_path.read_text()[-4000:]}")
        stats = spec_path.with_suffix(".stats.json")
        return json.loads(stats.read_text()) if stats.exists() else {}


def _stop(proc: subprocess.Popen) -> None:
    """Stop torchrun: SIGTERM, which its agent passes on to its ranks, then SIGKILL if it lingers."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _spec(run, i: int, inputs: dict, policy_out: Path, metrics_out: Path) -> UpdateSpec:
    """What update(i) trains on and writes: the same on every node of an update on several machines, but
    for where it writes (only global rank 0 writes, on node 0)."""
    cfg, paths, name = run.config, run.paths, f"update({i})"
    rollouts, scores = upstream(run, ROLLOUT, i, name), upstream(run, VERIFY, i, name)
    _require_weights(run, i, name, trainer_state=True)
    if cfg.update.kl_beta > 0:
        _require_weights(run, 0, f"{name} (KL reference)")
    return UpdateSpec(
        config=cfg,
        iteration=i,
        seed=derive_seed(cfg.run.seed, i, "update", 0),
        policy_in=str(paths.policy_dir(i)),
        reference=str(paths.policy_dir(0)),
        rollout_files=[str(f) for f in rollouts.parquet_files(paths.root)],
        score_files=[str(f) for f in scores.parquet_files(paths.root)],
        policy_out=str(policy_out),
        metrics_out=str(metrics_out),
        policy_in_id=inputs["policy"],
        reference_id=upstream(run, PREPARE, None, name).digest(),  # checks v0's files against prepare's record
    )


def update(run_dir: str | Path, iteration: int, node: Node | None = None) -> StageResult:
    """One GRPO update of v_i on iteration i's scored rollouts -> policy v_{i+1} + updates/iteration=i/.
    With `node` (update.nnodes > 1), this is node 0 of the update's machines: it trains with the others
    and commits."""
    run = open_run(run_dir)
    cfg, paths, i = run.config, run.paths, iteration
    inputs = stage_inputs(run, UPDATE, i)
    # torchrun ranks are processes of their own (cold each time); LoRA's PeftModel is not held yet (untested)
    warm = cfg.update.warm and cfg.update.nproc == 1 and cfg.update.nnodes == 1 and not cfg.update.lora_on
    written: list[str] = []

    def body(tx: StageTx) -> Outcome:
        retention.check_free_space(run, i)  # before anything is written, not after an hour of training
        t0 = time.perf_counter()
        out = tx.output(paths.policy_dir(i + 1))
        spec = _spec(run, i, inputs, out, tx.output(paths.table_dir("updates", i)) / shard_name(0))
        written.append(spec.policy_out)
        if node is not None:
            stats = launch_update(spec, cfg.update.nproc, node)
        else:
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


def update_node(run_dir: str | Path, iteration: int, node: Node) -> StageResult | None:
    """Node node.rank > 0 of update(i) on several machines (update.nnodes): the same step, on its share of
    the micro-batches, writing and committing nothing (node 0 does). The stage's result when it is
    committed already (nothing to train); None once this node's part of the step is done."""
    run = open_run(run_dir)
    i, inputs = iteration, stage_inputs(run, UPDATE, iteration)
    if (rec := committed(run.paths, UPDATE, i, inputs)) is not None:
        return _result(rec, True)
    with tempfile.TemporaryDirectory(prefix="rlvr-node-") as tmp:  # global rank 0 is on node 0: nothing lands here
        launch_update(_spec(run, i, inputs, Path(tmp) / "policy", Path(tmp) / "metrics.parquet"), run.config.update.nproc, node)
    return None
