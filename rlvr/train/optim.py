"""The model, optimiser and schedule around the step loop, and the checkpoint they end in.

own_memory and enable_gradient_checkpointing prepare the policy; lr_factor is the LR schedule
(linear warm-up, then constant or cosine decay); make_optimizer builds AdamW and restores it from
a checkpoint's trainer_state.pt; save_checkpoint writes the HF folder and trainer_state.pt
(optimiser, scheduler, global step, next iteration, CPU RNG), gathered from every rank under FSDP2.

Tests: tests/integration/test_update.py (schedule, exact resume, plain HF checkpoint), tests/integration/test_update_memory.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)
from transformers import AutoTokenizer, PreTrainedModel

from rlvr.config import UpdateSection
from rlvr.schema import TRAINER_STATE
from rlvr.train.distributed import Dist
from rlvr.train.lora import is_peft, save_adapter


def own_memory(model: PreTrainedModel) -> None:
    """Copy weights that transformers left mapped from the checkpoint's safetensors file into the
    process's own memory. The optimiser writes every weight at its first step, and a write to a
    mapped file page faults once per 4 KiB page (copy-on-write). On SmolLM2 that was 131k page
    faults and 1.6 s of a 1.8 s first optimiser step on CPU, where the copy takes 0.12 s. On a GPU
    the weights were already copied by `.to(device)`. Tied weights stay tied, because each
    Parameter object is kept and only its data is replaced."""
    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data.clone()


def enable_gradient_checkpointing(model: PreTrainedModel) -> None:
    """Keep only each decoder layer's input and recompute its activations in backward (HF's
    gradient checkpointing, non-reentrant torch.utils.checkpoint; Chen et al. 2016, arXiv:1604.06174)."""
    enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable  # transformers 5 | 4
    enable()
    model.config.use_cache = False


def lr_factor(step: int, cfg: UpdateSection) -> float:
    """Multiplier of cfg.lr at optimiser step `step` (0-based, counted over the whole run)."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return 1.0
    progress = min((step - cfg.warmup_steps) / cfg.decay_steps, 1.0)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_optimizer(
    model: PreTrainedModel, cfg: UpdateSection, state_from: Path | None
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR, int]:
    """AdamW + LR schedule, restored from state_from/trainer_state.pt when it exists; also
    returns the run's global optimiser step. `model` may be FSDP2-sharded (shard_fsdp2)."""
    # fused: one kernel for all parameters (CPU and CUDA in torch >= 2.4); the per-tensor loop was
    # ~9% of a CPU step (bench/update.py, py-spy)
    # only trainable parameters: all of them in a full fine-tune, the adapter's with LoRA (rlvr.train.lora)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg))
    step = 0
    if state_from is not None and (state_from / TRAINER_STATE).is_file():
        state = torch.load(state_from / TRAINER_STATE, map_location="cpu", weights_only=True)
        if state.get("optimizer_keys") == "names":  # a full state dict keyed by parameter name (FSDP2)
            if state["optimizer"] is not None:  # None: no step was taken yet
                set_optimizer_state_dict(model, opt, state["optimizer"], options=StateDictOptions(full_state_dict=True))
        else:
            opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        step = int(state["global_step"])
    return opt, sched, step


def save_checkpoint(
    model: PreTrainedModel,
    tok: AutoTokenizer,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LambdaLR,
    *,
    global_step: int,
    next_iteration: int,
    path: Path,
    dist: Dist,
) -> None:
    """Rank 0 writes the HF folder and trainer_state.pt. Sharded (FSDP2), every rank first takes
    part in gathering full, unsharded state dicts onto rank 0's CPU
    (torch.distributed.checkpoint.state_dict), so the folder is a plain HF one either way."""
    weights, optim = None, opt.state_dict()
    if dist.sharded:
        full = StateDictOptions(full_state_dict=True, cpu_offload=True)
        weights = get_model_state_dict(model, options=full)
        # gathered copies no longer share storage; leave tied duplicates (lm_head = embeddings) out, as HF does
        keep = {n for n, _ in model.named_parameters()} | {n for n, _ in model.named_buffers()}
        weights = {k: v for k, v in weights.items() if k in keep}
        # no state yet (no step): get_optimizer_state_dict would make one with a dummy step
        optim = get_optimizer_state_dict(model, opt, options=full) if opt.state else None
    if dist.rank != 0:
        return
    if is_peft(model):  # [update.lora]: the adapter and its base's reference, not full weights
        save_adapter(model, path)
    else:
        model.save_pretrained(path, state_dict=weights)
    tok.save_pretrained(path)
    state = {
        "optimizer": optim,
        "optimizer_keys": "names" if dist.sharded else "ids",
        "scheduler": sched.state_dict(),
        "global_step": global_step,
        "next_iteration": next_iteration,
        "rng_cpu": torch.get_rng_state(),
    }
    torch.save(state, path / TRAINER_STATE)
