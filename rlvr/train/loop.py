"""The step loop: GRPO optimisation of a policy on one iteration's training rows.

For each epoch (update.epochs) and mini-batch (update.minibatches): token-budget micro-batches
(rlvr.train.batch), recompute the sampled tokens' logprobs (rlvr.train.logprobs), the clipped
surrogate (rlvr.train.grpo) against the rollout's logprobs, optional KL to v0 and truncated or
masked importance sampling (TIS / MIS), gradient accumulation with whole-mini-batch normalisers, gradients summed
over ranks (rlvr.train.distributed), clipping, AdamW and the LR schedule. One metrics dict per
optimiser step (step_metrics). Before any step, the no-grad passes: imported responses'
missing logprobs (fill_missing_logprobs) and, for TIS / MIS, pi_old as the trainer computes it.

Tests: tests/integration/test_update.py (gradient direction, accumulation, variants), tests/integration/test_update_packing.py,
tests/integration/test_update_memory.py, tests/unit/train/test_grpo.py (the maths).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import torch
from torch.distributed.tensor import DTensor
from transformers import PreTrainedModel

from rlvr.config import UpdateSection
from rlvr.train import grpo
from rlvr.train.batch import TrainRow, collate, micro_batches, rank_micro_batches
from rlvr.train.budget import resolve_layout
from rlvr.train.distributed import Dist
from rlvr.train.logprobs import ResponseLogprobs, response_logprobs, rows_logprobs

# metric sums over a step's micro-batches (and ranks)
SUMS = ("loss", "pg", "kl", "clip_low", "clip_high", "ratio", "approx_kl", "entropy", "tis", "is_capped", "diff_sum")
MAXES = ("diff_max", "is_max")  # metric maxima over a step's micro-batches (and ranks)
FILL_ROWS = 64  # rows a pass when filling missing logprobs, padded: bounded memory, few passes


def peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def fill_missing_logprobs(
    model: PreTrainedModel | ResponseLogprobs,
    rows: list[TrainRow],
    *,
    temperature: float,
    pad_id: int,
    cfg: UpdateSection,
    device: torch.device,
) -> tuple[list[TrainRow], int]:
    """Rows without sampling logprobs (imported responses) get them from the current policy v_i, in
    one no-grad pass before any step: their ratio starts at 1, as on-policy samples' does.
    Returns the rows and how many were filled."""
    missing = sorted((k for k, r in enumerate(rows) if len(r.old_logprobs) != len(r.response_ids)), key=lambda k: rows[k].length)
    if not missing:
        return rows, 0
    blank = [replace(rows[k], old_logprobs=[0.0] * len(rows[k].response_ids)) for k in missing]  # collate needs R of them
    batches = [blank[s : s + FILL_ROWS] for s in range(0, len(blank), FILL_ROWS)]
    lps = rows_logprobs(model, batches, temperature=temperature, pad_id=pad_id, device=device, bf16=cfg.bf16)
    out = list(rows)
    for k, lp in zip(missing, lps, strict=True):
        out[k] = replace(rows[k], old_logprobs=lp)
    return out, len(missing)


def with_trainer_old_logprobs(
    model: PreTrainedModel | ResponseLogprobs,
    rows: list[TrainRow],
    *,
    temperature: float,
    pad_id: int,
    cfg: UpdateSection,
    device: torch.device,
) -> list[TrainRow]:
    """TIS needs pi_old as the *trainer* computes it; one no-grad pass before any step, over the
    training micro-batches (every rank runs every one). The rows come back length-sorted, in
    micro-batch order."""
    mbs = micro_batches(rows, cfg.micro_batch_tokens, packed=cfg.packing)
    lps = rows_logprobs(model, mbs, temperature=temperature, pad_id=pad_id, device=device, bf16=cfg.bf16, packed=cfg.packing)
    return [replace(r, trainer_old_logprobs=lp) for r, lp in zip((r for mb in mbs for r in mb), lps, strict=True)]


def objective_of(cfg: UpdateSection) -> grpo.Objective:
    """The loss the update's config asks for (rlvr.train.grpo.objective)."""
    clip = grpo.ClipConfig(cfg.eps_low, cfg.eps_high, cfg.dual_clip or None)
    return grpo.Objective(clip, cfg.aggregation, cfg.tis_cap, cfg.mis_cap, cfg.kl_beta, cfg.kl_estimator, cfg.objective)


def micro_batch_loss(
    model: PreTrainedModel | ResponseLogprobs,
    batch: dict[str, torch.Tensor],
    *,
    obj: grpo.Objective,
    totals: grpo.Totals,
    temperature: float,
    bf16: bool,
    ref_model: PreTrainedModel | None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The forward passes around grpo.objective: one micro-batch's loss () and metric sums (SUMS, + MAXES),
    left on the device (accumulate reads them once per step)."""
    logp, entropy = response_logprobs(model, batch, temperature, bf16)  # (b, T-1), (b, T-1)
    ref_lp = None
    if ref_model is not None and obj.kl_beta > 0:
        with torch.no_grad():
            ref_lp, _ = response_logprobs(ref_model, batch, temperature, bf16)  # (b, T-1)
    old = batch["trainer_old"] if "trainer_old" in batch else batch["old"]  # (b, T-1)
    loss, sums = grpo.objective(logp, old, batch["old"], batch["adv"], batch["mask"], obj, totals, ref_lp)
    return loss, sums | {"entropy": entropy.detach().sum()}


def step_metrics(
    sums: dict[str, float], maxes: dict[str, float], totals: grpo.Totals, *, kl: bool, tis: bool, first: bool
) -> dict:
    """One optimiser step's loss metrics from its sums over micro-batches and ranks (SUMS) and maxima
    (MAXES): per response-token means over the mini-batch; kl only with a reference and kl_beta > 0,
    the importance weights' figures only with TIS or MIS, the engine/trainer gap only on the first
    step (the weights are still the sampler's)."""
    n = max(totals.tokens, 1)
    return {
        "loss": sums["loss"],
        "policy_loss": sums["pg"],
        "kl": sums["kl"] / n if kl else None,
        "clip_frac_low": sums["clip_low"] / n,
        "clip_frac_high": sums["clip_high"] / n,
        "ratio_mean": sums["ratio"] / n,
        "approx_kl": sums["approx_kl"] / n,
        "entropy": sums["entropy"] / n,
        "tokens": totals.tokens,
        "sequences": totals.sequences,
        "logprob_diff_mean": sums["diff_sum"] / n if first else None,
        "logprob_diff_max": maxes["diff_max"] if first else None,
        "tis_weight_mean": sums["tis"] / n if tis else None,
        "is_weight_max": maxes["is_max"] if tis else None,
        "is_capped_frac": sums["is_capped"] / n if tis else None,
    }


def accumulate(
    model: PreTrainedModel | ResponseLogprobs,
    mbs: list[list[TrainRow]],
    loss_of: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, dict[str, float]]],
    *,
    batch_of: Callable[[list[TrainRow]], dict[str, torch.Tensor]],
    dist: Dist,
    advance: Callable[[int], None],
) -> tuple[dict[str, float], dict[str, float]]:
    """Forward and backward over this rank's share of a mini-batch's micro-batches, then gradients
    and metric sums summed over ranks: returns the sums (SUMS) and maxima (MAXES: the largest logprob
    gap and importance weight). `advance(n)` counts the n sequences each micro-batch trained."""
    zero = torch.zeros((), dtype=torch.float64, device=next(model.parameters()).device)
    acc, top = dict.fromkeys(SUMS, zero), dict.fromkeys(MAXES, zero)
    for mb in dist.share(mbs):
        loss, sums = loss_of(batch_of(mb or mbs[0]))
        if mb is None:  # an FSDP2 filler: its collectives run, its gradient is zero
            loss = loss * 0.0
        else:  # on the device, in float64 as Python floats were: no read until the step's end
            acc = {k: acc[k] + _double(sums[k]) for k in SUMS}
            top = {
                k: torch.maximum(top[k], _double(sums[k])) if torch.is_tensor(sums[k]) else top[k].clamp(min=sums[k])
                for k in MAXES
            }
        loss.backward()
        if mb is not None:
            advance(len(mb))
    dist.sum_grads(model)
    # one transfer: one host synchronisation per optimiser step, however many micro-batches it had
    values = torch.stack([acc[k] for k in SUMS] + [top[k] for k in MAXES]).tolist()
    sums, maxes = values[: len(SUMS)], values[len(SUMS) :]
    return dict(zip(SUMS, dist.sum(sums), strict=True)), {k: dist.max(v) for k, v in zip(MAXES, maxes, strict=True)}


def _double(x: float | torch.Tensor) -> float | torch.Tensor:
    """A metric as float64 on its device; a Python number (an unused metric's 0.0) stays one, added as a
    scalar, never copied to the device."""
    return x.detach().double() if torch.is_tensor(x) else x


def optimizer_step(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LambdaLR, max_grad_norm: float
) -> tuple[float, float]:
    """Clip, step, advance the schedule; returns the gradient norm before clipping and the lr stepped with."""
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grad_norm = grad_norm.full_tensor() if isinstance(grad_norm, DTensor) else grad_norm  # FSDP2: a replicated DTensor
    lr = optimizer.param_groups[0]["lr"]
    optimizer.step()
    scheduler.step()
    return float(grad_norm), lr


def _counter(on_progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    """advance(n): n more sequences done, reported as on_progress(done, total); reports 0 at once."""
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if on_progress is not None:
            on_progress(done, total)

    advance(0)
    return advance


def grpo_steps(
    model: PreTrainedModel | ResponseLogprobs,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LambdaLR,
    rows: list[TrainRow],
    *,
    cfg: UpdateSection,
    temperature: float,
    pad_id: int,
    norm_constant: float,
    ref_model: PreTrainedModel | None = None,
    dist: Dist = Dist(),
    on_progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """All optimiser steps of one iteration; one metrics dict per step. `model` is the policy, or
    its FSDP2-sharded ResponseLogprobs (then `dist.sharded`). `on_progress(done, total)` counts this
    process's sequences through forward and backward, over all epochs. update.micro_batch_tokens and
    update.packing on "auto" are settled here, by the device (rlvr.train.budget)."""
    device = next(model.parameters()).device
    cfg = resolve_layout(cfg, model, optimizer, dist)
    obj = objective_of(cfg)
    tis, kl = (cfg.tis_cap > 0 or cfg.mis_cap > 0) and cfg.objective == "grpo", ref_model is not None and cfg.kl_beta > 0
    n_truncated = sum(r.truncated for r in rows) if cfg.mask_truncated else 0
    if cfg.mask_truncated:
        rows = [r for r in rows if not r.truncated]
    if tis:
        rows = with_trainer_old_logprobs(model, rows, temperature=temperature, pad_id=pad_id, cfg=cfg, device=device)
    advance = _counter(on_progress, len(rows) * cfg.epochs)
    metrics: list[dict] = []
    for epoch in range(cfg.epochs):
        parts = [rows[k :: cfg.minibatches] for k in range(cfg.minibatches)]
        for part in (p for p in parts if p):
            t0 = time.perf_counter()
            model.train()
            totals = grpo.Totals(tokens=sum(len(r.response_ids) for r in part), sequences=len(part), norm_constant=norm_constant)
            mbs = rank_micro_batches(part, cfg.micro_batch_tokens, packed=cfg.packing, ranks=dist.world)
            dist.zero_grads(model, optimizer)
            sums, maxes = accumulate(
                model,
                mbs,
                partial(
                    micro_batch_loss, model, obj=obj, totals=totals, temperature=temperature, bf16=cfg.bf16, ref_model=ref_model
                ),
                batch_of=partial(collate, pad_id=pad_id, device=device, packed=cfg.packing),
                dist=dist,
                advance=advance,
            )
            grad_norm, lr = optimizer_step(model, optimizer, scheduler, cfg.max_grad_norm)
            metrics.append(
                {"epoch": epoch, "step": len(metrics)}
                | step_metrics(sums, maxes, totals, kl=kl, tis=tis, first=not metrics)
                | {"grad_norm": grad_norm, "lr": lr, "micro_batches": sum(mb is not None for mb in mbs)}
                | {"micro_batch_tokens": cfg.micro_batch_tokens, "truncated_masked": n_truncated}
                | {"seconds": time.perf_counter() - t0, "peak_memory_mb": peak_memory_mb(device), "world_size": dist.world}
            )
    model.eval()
    return metrics
