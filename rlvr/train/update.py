"""One iteration's update, v_i -> v_{i+1}: the entry the update stage calls, in this process or in
each torchrun rank (rlvr.train.worker).

run_update reads the training rows (rlvr.train.batch), loads the policy (and v0 when kl_beta > 0)
onto this rank's device, shards it under FSDP2 (rlvr.train.distributed), restores the optimiser
(rlvr.train.optim), fills imported responses' missing logprobs, runs the step loop
(rlvr.train.loop.grpo_steps), and rank 0 writes the checkpoint and one `updates` row per step.
With update.warm (one process), the trainer the previous update ended with is used instead of
loading when it is the committed v_i (rlvr.train.warm).

    python -m torch.distributed.run --standalone --nproc_per_node 2 -m rlvr.train.worker SPEC.json

Tests: tests/integration/test_update.py (1 vs 2 processes with DDP and FSDP2, exact resume after a SIGKILL).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import torch
from pydantic import BaseModel
from transformers import AutoTokenizer, PreTrainedModel

from rlvr.config import Config, UpdateSection
from rlvr.models.load import load_policy, resolve_device
from rlvr.progress import progress
from rlvr.schema import UPDATES, StepMetrics
from rlvr.seeds import derive_seed
from rlvr.store.commit import maybe_fault, write_table
from rlvr.train import warm as warm_pool
from rlvr.train.batch import load_rows
from rlvr.train.budget import attention_for
from rlvr.train.distributed import Dist, shard_fsdp2
from rlvr.train.logprobs import ResponseLogprobs
from rlvr.train.loop import fill_missing_logprobs, grpo_steps, peak_memory_mb
from rlvr.train.lora import trainable_policy
from rlvr.train.optim import enable_gradient_checkpointing, make_optimizer, own_memory, save_checkpoint
from rlvr.train.warm import TrainerState


class UpdateSpec(BaseModel):
    """Everything an update needs, JSON-serialisable for the torchrun workers."""

    config: Config  # the run's frozen config
    iteration: int
    seed: int
    policy_in: str
    reference: str  # policy v0, used when kl_beta > 0
    rollout_files: list[str]
    score_files: list[str]
    policy_out: str
    metrics_out: str
    policy_in_id: str = ""  # digest of the record that committed policy_in: what a warm trainer must hold
    reference_id: str = ""  # digest of the record that committed the reference (v0)


def _placement(u: UpdateSection) -> tuple[Dist, torch.device]:
    """This process's rank and device: under torchrun on CUDA, rank r takes GPU r (mod the count)."""
    dist = Dist.current()
    if u.nproc > 1 and dist.world == 1:
        raise RuntimeError("update.nproc > 1 must run under torchrun (rlvr.train.worker), not in-process")
    device = resolve_device(u.device)
    if device.type == "cuda" and dist.world > 1:
        device = torch.device("cuda", dist.rank % torch.cuda.device_count())
        torch.cuda.set_device(device)  # FSDP2's default device mesh takes the current device
    return dist, device


def _policy(
    path: Path, u: UpdateSection, device: torch.device, dist: Dist, *, seed: int = 0
) -> tuple[PreTrainedModel, AutoTokenizer, PreTrainedModel | ResponseLogprobs, Dist]:
    """The policy to train, its tokenizer, and what the loop runs: the policy itself, or its FSDP2
    ResponseLogprobs root with `dist.sharded` set. With [update.lora]: the PeftModel, and the
    transformers model inside it (rlvr.train.lora; a fresh adapter is initialised from `seed`)."""
    if u.lora_on:
        model, tok, net = trainable_policy(path, u.lora, device=device, seed=seed, input_grads=u.gradient_checkpointing)
        if u.gradient_checkpointing:
            enable_gradient_checkpointing(net)
        return model, tok, net, dist
    model, tok = load_policy(path, device, attention=attention_for(u, device))
    if device.type == "cpu":
        own_memory(model)
    if u.gradient_checkpointing:
        enable_gradient_checkpointing(model)
    if u.strategy == "fsdp2" and dist.world > 1:  # one process has nothing to shard over
        return model, tok, shard_fsdp2(model), replace(dist, sharded=True)
    return model, tok, model, dist


def _setup(spec: UpdateSpec, device: torch.device) -> str:
    """What a held trainer must have been built with to serve this update (rlvr.train.warm.take)."""
    return f"{spec.config.hash()}|{spec.reference_id}|{device}"


def _load(spec: UpdateSpec, dist: Dist, device: torch.device) -> tuple[TrainerState, Dist]:
    """A cold start: v_i's weights and tokenizer from policy_in, v0 when kl_beta > 0, and AdamW and
    its schedule restored from policy_in's trainer_state.pt."""
    u = spec.config.update
    seed = derive_seed(spec.config.run.seed, 0, "lora_init", 0)
    model, tok, net, dist = _policy(Path(spec.policy_in), u, device, dist, seed=seed)
    ref = None
    if u.kl_beta > 0:  # loaded only when used
        ref, _ = load_policy(Path(spec.reference), device)
        ref.eval().requires_grad_(False)
    opt, sched, global_step = make_optimizer(model, u, Path(spec.policy_in))
    return TrainerState(model, tok, net, ref, opt, sched, global_step), dist


def run_update(spec: UpdateSpec, *, warm: bool = False) -> dict:
    """Train v_i -> v_{i+1}; rank 0 writes the checkpoint and the metrics. Returns stats (`warm`:
    whether a held trainer was used; where the time went: load_seconds, step_seconds, save_seconds).
    With warm (nproc = 1 only), the trainer held from the previous update is used when it is v_i as
    committed, and what this one ends with is held for the next."""
    dist, device = _placement(spec.config.update)
    rows, temperature, stats = load_rows(
        [Path(f) for f in spec.rollout_files], [Path(f) for f in spec.score_files], spec.config.update.objective
    )
    held = warm_pool.take(spec.policy_in_id, _setup(spec, device)) if warm else None  # cold leaves any held trainer be
    try:
        t0 = time.perf_counter()
        state, dist = (held, dist) if held is not None else _load(spec, dist, device)
        loaded = time.perf_counter() - t0
        out = _train(spec, state, rows, temperature, stats, dist=dist, device=device)
    except BaseException:
        warm_pool.drop()
        raise
    if warm:
        warm_pool.keep(state, spec.policy_out, _setup(spec, device))
    return out | {"warm": held is not None, "load_seconds": round(loaded, 3)}


def _progress(iteration: int, done: int, total: int) -> None:
    progress("update", iteration, done=done, total=total, unit="sequences")
    if done:  # crash tests: a machine lost in the middle of a step (tests/e2e/test_nodes.py)
        maybe_fault("update", iteration, "mid_step")


def _train(
    spec: UpdateSpec, state: TrainerState, rows: list, temperature: float, stats: dict, *, dist: Dist, device: torch.device
) -> dict:
    """The steps, the checkpoint and the metrics of one update from `state` (advanced in place)."""
    cfg, u = spec.config, spec.config.update
    torch.manual_seed(spec.seed)
    pad = state.tok.pad_token_id if state.tok.pad_token_id is not None else 0
    # imported responses without logprobs: the current policy's, before any step (every rank alike)
    rows, stats["logprobs_filled"] = fill_missing_logprobs(
        state.net, rows, temperature=temperature, pad_id=pad, cfg=u, device=device
    )
    t0 = time.perf_counter()
    steps = (
        grpo_steps(
            state.net,
            state.opt,
            state.sched,
            rows,
            cfg=u,
            temperature=temperature,
            pad_id=pad,
            norm_constant=float(cfg.rollout.max_new_tokens),
            ref_model=state.ref,
            dist=dist,
            on_progress=partial(_progress, spec.iteration),
        )
        if rows
        else []
    )
    if not steps:  # every group had equal rewards: nothing to learn; v_{i+1} = v_i, recorded as such
        steps = [{"lr": state.opt.param_groups[0]["lr"], "peak_memory_mb": peak_memory_mb(device), "world_size": dist.world}]
    stepped, t0 = time.perf_counter() - t0, time.perf_counter()
    first = state.global_step
    rows_out = [asdict(StepMetrics(iteration=spec.iteration, global_step=first + k, **s, **stats)) for k, s in enumerate(steps)]
    state.global_step += sum(s.get("sequences", 0) > 0 for s in steps)
    save_checkpoint(
        state.model,
        state.tok,
        state.opt,
        state.sched,
        global_step=state.global_step,
        next_iteration=spec.iteration + 1,
        path=Path(spec.policy_out),
        dist=dist,
    )
    if dist.rank == 0:
        write_table(rows_out, UPDATES, Path(spec.metrics_out))
    times = {"step_seconds": round(stepped, 3), "save_seconds": round(time.perf_counter() - t0, 3)}
    return {**stats, "sequences": len(rows), "steps": len(steps), "loss": rows_out[-1]["loss"], "world_size": dist.world} | times
