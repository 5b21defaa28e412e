"""Update: GRPO optimisation of policy v_i on iteration i's scored rollouts -> v_{i+1}.

Reads the training rows with DuckDB (sql/update_batch.sql: groups with reward variance only),
then for each epoch (mu) and mini-batch: token-budget micro-batches, length-sorted, right-padded
or packed without padding (update.packing), recompute the sampled tokens'
logprobs, the clipped surrogate (rlvr.train.grpo) against the rollout's logprobs, optional KL to v0
and truncated importance sampling, gradient accumulation with whole-mini-batch normalisers,
clipping, AdamW and the LR schedule.

Checkpoint = the HF folder + trainer_state.pt (optimiser, scheduler, global step, RNG, data
cursor). Data parallel: under torchrun each rank takes every world-th micro-batch; with
update.strategy = "ddp" gradients are summed with all_reduce before the step, with "fsdp2"
parameters, gradients and optimiser state are sharded (fully_shard) and gradients are
reduce-scattered; either way N processes take the same step as one.

    python -m torch.distributed.run --standalone --nproc_per_node 2 -m rlvr.train.worker SPEC.json

Tests: tests/test_update.py (gradient direction, accumulation, 1 vs 2 processes with DDP and
FSDP2, exact resume), tests/test_update_packing.py, tests/test_update_memory.py.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import torch
import torch.distributed as tdist
import torch.utils.checkpoint
from pydantic import BaseModel
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor
from transformers import AutoTokenizer, PreTrainedModel

from rlvr.config import Config, UpdateSection
from rlvr.models.load import load_policy, resolve_device
from rlvr.progress import progress
from rlvr.schema import UPDATES, StepMetrics
from rlvr.store.commit import write_table
from rlvr.train import grpo, sql

TRAINER_STATE = "trainer_state.pt"


@dataclass(frozen=True)
class TrainRow:
    prompt_ids: list[int]
    response_ids: list[int]
    old_logprobs: list[float]  # the sampling engine's logprobs of response_ids
    advantage: float
    truncated: bool = False  # finish_reason == "length"
    trainer_old_logprobs: list[float] | None = None  # TIS: pi_old as the trainer computes it

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)


# ---- data ---------------------------------------------------------------------------------


def load_rows(rollout_files: list[Path], score_files: list[Path], objective: str = "grpo") -> tuple[list[TrainRow], float, dict]:
    """Training rows, the sampling temperature, and group stats. grpo: the signal-carrying groups'
    rows; rft: the correct rows (advantage 1). A row whose response_logprobs are missing (an
    imported response without them, `rlvr import`: NULL in the table) has old_logprobs = [] (see
    fill_missing_logprobs)."""
    con = duckdb.connect()
    p = {"rollouts": [str(f) for f in rollout_files], "scores": [str(f) for f in score_files], "objective": objective}
    rows = con.execute(sql.load("update_batch"), p).fetchall()
    used, dropped, reward_mean = con.execute(sql.load("update_stats"), {"scores": p["scores"], "objective": objective}).fetchone()
    temps = {r[5] for r in rows}
    if len(temps) > 1:
        raise ValueError(f"rollout rows of one iteration have several temperatures {sorted(temps)}; expected one")
    out = [TrainRow(list(r[2]), list(r[3]), list(r[4] or []), float(r[6]), r[7] == "length") for r in rows]
    stats = {"groups_used": used or 0, "groups_dropped": dropped or 0, "reward_mean": float(reward_mean or 0.0)}
    return out, (temps.pop() if temps else 1.0), stats


def micro_batches(rows: list[TrainRow], token_budget: int, *, packed: bool = False) -> list[list[TrainRow]]:
    """Length-sorted micro-batches within a token budget (a row longer than the budget gets a
    micro-batch of its own). padded: rows x longest <= budget; packed: sum of lengths <= budget."""
    out: list[list[TrainRow]] = []
    for r in sorted(rows, key=lambda r: r.length):
        size = (sum(x.length for x in out[-1]) + r.length if packed else (len(out[-1]) + 1) * r.length) if out else 0
        if out and size <= token_budget:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def collate(rows: list[TrainRow], pad_id: int, device: torch.device, *, packed: bool = False) -> dict[str, torch.Tensor]:
    """One micro-batch: the model's input and the loss tensors.

    Loss tensors are response-aligned in a (B, T-1) layout, T the longest row: position t of row b
    predicts token t+1 of sequence b; `mask` is 1 there for response tokens, `old` holds their
    rollout logprobs, `adv` (B,) the advantages. The model's input is either
    - padded: `ids`, `attn` (B, T), right-padded; or
    - packed: `ids`, `pos` (1, L), L = the sum of the lengths, no padding: the sequences side by
      side, position ids restarting at 0 for each, and `src` (1, L-1) marking the positions that
      predict a response token (in the same order as `mask`). With attention_mask=None,
      transformers reads the sequence boundaries from the position ids and keeps attention inside
      each sequence (masking_utils.find_packed_sequence_indices): the padding-free packing of
      TRL's `padding_free` / DataCollatorWithFlattening.
    """
    T = max(r.length for r in rows)
    B = len(rows)
    mask = torch.zeros((B, T - 1))  # (B, T-1): 1 where position t predicts a response token
    old = torch.zeros((B, T - 1))  # (B, T-1)
    for b, r in enumerate(rows):
        P, R = len(r.prompt_ids), len(r.response_ids)
        mask[b, P - 1 : P + R - 1] = 1
        old[b, P - 1 : P + R - 1] = torch.tensor(r.old_logprobs)
    out = {"mask": mask, "old": old, "adv": torch.tensor([r.advantage for r in rows])}  # adv: (B,)
    if rows[0].trainer_old_logprobs is not None:
        trainer_old = torch.zeros((B, T - 1))  # (B, T-1)
        for b, r in enumerate(rows):
            P, R = len(r.prompt_ids), len(r.response_ids)
            trainer_old[b, P - 1 : P + R - 1] = torch.tensor(r.trainer_old_logprobs)
        out["trainer_old"] = trainer_old
    if packed:
        out["ids"] = torch.tensor([t for r in rows for t in r.prompt_ids + r.response_ids])[None]  # (1, L)
        out["pos"] = torch.cat([torch.arange(r.length) for r in rows])[None]  # (1, L)
        src = torch.zeros((1, out["ids"].shape[1] - 1), dtype=torch.bool)  # (1, L-1)
        start = 0
        for r in rows:
            src[0, start + len(r.prompt_ids) - 1 : start + r.length - 1] = True
            start += r.length
        out["src"] = src
    else:
        out["ids"] = torch.full((B, T), pad_id, dtype=torch.long)  # (B, T)
        out["attn"] = torch.zeros((B, T), dtype=torch.long)  # (B, T)
        for b, r in enumerate(rows):
            out["ids"][b, : r.length] = torch.tensor(r.prompt_ids + r.response_ids)
            out["attn"][b, : r.length] = 1
    return {k: v.to(device) for k, v in out.items()}


# ---- model, optimiser, schedule -----------------------------------------------------------


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
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, fused=True)
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


# ---- data parallel ------------------------------------------------------------------------


@dataclass(frozen=True)
class Dist:
    rank: int = 0
    world: int = 1
    sharded: bool = False  # FSDP2: gradients are reduce-scattered by FSDP, not all-reduced here

    @staticmethod
    def current() -> Dist:
        if tdist.is_available() and tdist.is_initialized():
            return Dist(tdist.get_rank(), tdist.get_world_size())
        return Dist()

    def share(self, items: list) -> list:
        """This rank's items: every world-th. Sharded ranks must all run as many forward/backward
        passes (FSDP2's all-gathers and reduce-scatters are collectives): short ones get None."""
        mine = items[self.rank :: self.world]
        return mine + [None] * (-(-len(items) // self.world) - len(mine)) if self.sharded else mine

    def sum_grads(self, model: torch.nn.Module) -> None:
        if self.world == 1 or self.sharded:
            return
        for p in model.parameters():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            tdist.all_reduce(p.grad, op=tdist.ReduceOp.SUM)

    def sum(self, values: list[float]) -> list[float]:
        if self.world == 1:
            return values
        t = torch.tensor(values, dtype=torch.float64)
        tdist.all_reduce(t, op=tdist.ReduceOp.SUM)
        return t.tolist()

    def max(self, value: float) -> float:
        if self.world == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        tdist.all_reduce(t, op=tdist.ReduceOp.MAX)
        return float(t)


def shard_fsdp2(model: PreTrainedModel) -> ResponseLogprobs:
    """FSDP2 (torch.distributed.fsdp.fully_shard) over all ranks: each decoder layer (HF's
    `_no_split_modules`) one unit, the rest (embeddings, final norm, LM head) the root unit around
    ResponseLogprobs, as torchtitan's apply_fsdp does. Gradients are summed over ranks (divide
    factor 1, SUM reduction), as Dist.sum_grads does: the loss is normalised by whole-mini-batch
    totals already."""
    for m in model.modules():
        if type(m).__name__ in (model._no_split_modules or []):
            fully_shard(m)
    net = fully_shard(ResponseLogprobs(model))
    for m in net.modules():
        if isinstance(m, FSDPModule):
            m.set_gradient_divide_factor(1.0)
            m.set_force_sum_reduction_for_comms(True)  # a plain SUM: gloo has no PREMUL_SUM
    return net


# ---- the optimisation loop ----------------------------------------------------------------


def _autocast(device: torch.device, bf16: bool) -> torch.autocast:
    """bf16 autocast where asked, on CUDA or CPU (torch.autocast supports both)."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)


def _model_inputs(batch: dict[str, torch.Tensor]) -> dict:
    """HF forward arguments for a padded or a packed batch; no KV cache (it would also turn off
    transformers' packed-sequence detection, which runs only without a cache)."""
    return {"input_ids": batch["ids"], "attention_mask": batch.get("attn"), "position_ids": batch.get("pos"), "use_cache": False}


def _forward(model: PreTrainedModel, batch: dict[str, torch.Tensor], bf16: bool) -> torch.Tensor:
    with _autocast(batch["ids"].device, bf16):
        return model(**_model_inputs(batch)).logits  # (B, T, V)


HEAD_CHUNK_TOKENS = 1024  # response tokens per LM-head chunk: bounds the (chunk, V) logits held at once


def _plain_linear_head(model: PreTrainedModel) -> torch.nn.Module | None:
    """The LM head when logits are just `hidden @ W.T (+ b)` (Llama, Qwen, Mistral, SmolLM...),
    else None (soft-capped or scaled heads take the full-logits path)."""
    head = model.get_output_embeddings()
    conf = model.config
    if not isinstance(head, torch.nn.Linear) or getattr(conf, "final_logit_softcapping", None):
        return None
    if getattr(conf, "logit_scale", None) not in (None, 1.0) or not hasattr(model, model.base_model_prefix):
        return None
    return head


def _chunk_logprobs(
    h: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, H) hidden states -> logprob of each target (n,) and entropy (n,), via (n, V) logits."""
    logits = torch.nn.functional.linear(h, weight, bias).float() / (temperature if temperature > 0 else 1.0)  # (n, V)
    logz = torch.logsumexp(logits, dim=-1)  # (n,)
    lp = logits.gather(-1, targets[:, None]).squeeze(-1) - logz  # (n,)
    with torch.no_grad():
        probs = torch.softmax(logits, dim=-1)  # (n, V)
        entropy = logz - (probs * logits).sum(-1)  # (n,)  H = log Z - E_p[logit]
    return lp, entropy


class ResponseLogprobs(torch.nn.Module):
    """A policy as `batch -> (logprobs (N,), entropies (N,))` of the batch's N response tokens.

    The transformer runs once; the LM head runs only on response positions, in chunks that are
    recomputed in backward (torch.utils.checkpoint), so the (tokens, vocab) logits never exist for
    the whole micro-batch: with a 49k vocabulary they, not the layers, dominated peak memory
    (bench/update.py). TRL's `logits_to_keep` and chunked log-prob head follow the same idea.
    A module, not a function, because under FSDP2 it is the root that fully_shard wraps: FSDP2
    gathers and reduces the root's parameters (embeddings, final norm, LM head) only around a
    module's forward, and the head chunks bypass the HF model's own forward."""

    def __init__(self, policy: PreTrainedModel):
        super().__init__()
        self.policy = policy

    def forward(self, batch: dict[str, torch.Tensor], temperature: float, bf16: bool = False) -> tuple[torch.Tensor, ...]:
        src = batch["src"] if "src" in batch else batch["mask"].bool()  # (b, t-1): inputs that predict a response token
        targets = batch["ids"][:, 1:][src]  # (N,)
        head = _plain_linear_head(self.policy)
        if head is None:  # generic path: full logits
            logits = _forward(self.policy, batch, bf16)[:, :-1][src]  # (N, V)
            with torch.no_grad():
                ent = grpo.token_entropy(logits, temperature)  # (N,)
            return grpo.token_logprobs(logits, targets, temperature), ent
        with _autocast(batch["ids"].device, bf16):
            base = getattr(self.policy, self.policy.base_model_prefix)
            h = base(**_model_inputs(batch)).last_hidden_state[:, :-1][src]  # (N, H)
        lps, ents = [], []
        for s in range(0, h.shape[0], HEAD_CHUNK_TOKENS):
            lp, ent = torch.utils.checkpoint.checkpoint(
                _chunk_logprobs,
                h[s : s + HEAD_CHUNK_TOKENS],
                targets[s : s + HEAD_CHUNK_TOKENS],
                head.weight,
                head.bias,
                temperature,
                use_reentrant=False,
            )
            lps.append(lp)
            ents.append(ent.detach())
        return torch.cat(lps), torch.cat(ents)  # (N,), (N,)


def response_logprobs(
    model: PreTrainedModel | ResponseLogprobs, batch: dict[str, torch.Tensor], temperature: float, bf16: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logprobs (B, T-1) of the batch's response tokens in the loss layout (0 elsewhere) and their
    entropies (B, T-1); padded or packed batch (collate). `model`: a policy, or a policy wrapped
    in ResponseLogprobs (FSDP2)."""
    net = model if isinstance(model, ResponseLogprobs) else ResponseLogprobs(model)
    lp, ent = net(batch, temperature, bf16)  # (N,), (N,): in `mask` order (row-major, as `src`)
    mask = batch["mask"].bool()  # (B, T-1)
    zeros = torch.zeros(mask.shape, dtype=torch.float32, device=lp.device)  # (B, T-1)
    return zeros.masked_scatter(mask, lp), zeros.masked_scatter(mask, ent)


def _peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


# metric sums over a step's micro-batches (and ranks)
SUMS = ("loss", "pg", "kl", "clip_low", "clip_high", "ratio", "approx_kl", "entropy", "tis", "diff_sum")


def _micro_batch_loss(
    model: PreTrainedModel | ResponseLogprobs,
    batch: dict[str, torch.Tensor],
    *,
    obj: grpo.Objective,
    totals: grpo.Totals,
    temperature: float,
    bf16: bool,
    ref_model: PreTrainedModel | None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The forward passes around grpo.objective: one micro-batch's loss () and metric sums (SUMS, + diff_max)."""
    logp, entropy = response_logprobs(model, batch, temperature, bf16)  # (b, T-1), (b, T-1)
    ref_lp = None
    if ref_model is not None and obj.kl_beta > 0:
        with torch.no_grad():
            ref_lp, _ = response_logprobs(ref_model, batch, temperature, bf16)  # (b, T-1)
    old = batch["trainer_old"] if "trainer_old" in batch else batch["old"]  # (b, T-1)
    loss, sums = grpo.objective(logp, old, batch["old"], batch["adv"], batch["mask"], obj, totals, ref_lp)
    return loss, sums | {"entropy": float(entropy.detach().sum())}


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
    process's sequences through forward and backward, over all epochs."""
    device = next(model.parameters()).device
    obj = grpo.Objective(
        grpo.ClipConfig(cfg.eps_low, cfg.eps_high, cfg.dual_clip or None),
        cfg.aggregation,
        cfg.tis_cap,
        cfg.kl_beta,
        cfg.kl_estimator,
        cfg.objective,
    )
    n_truncated = sum(r.truncated for r in rows) if cfg.mask_truncated else 0
    if cfg.mask_truncated:
        rows = [r for r in rows if not r.truncated]
    if cfg.tis_cap > 0 and cfg.objective == "grpo":
        rows = _with_trainer_old_logprobs(model, rows, temperature, pad_id, cfg, device)
    metrics: list[dict] = []
    done, total = 0, len(rows) * cfg.epochs
    if on_progress is not None:
        on_progress(done, total)
    for epoch in range(cfg.epochs):
        parts = [rows[k :: cfg.minibatches] for k in range(cfg.minibatches)]
        for part in (p for p in parts if p):
            t0 = time.perf_counter()
            model.train()
            totals = grpo.Totals(tokens=sum(len(r.response_ids) for r in part), sequences=len(part), norm_constant=norm_constant)
            mbs = micro_batches(part, cfg.micro_batch_tokens, packed=cfg.packing)
            optimizer.zero_grad(set_to_none=True)
            acc, diff_max = dict.fromkeys(SUMS, 0.0), 0.0
            for mb in dist.share(mbs):
                batch = collate(mb or mbs[0], pad_id, device, packed=cfg.packing)
                loss, sums = _micro_batch_loss(
                    model, batch, obj=obj, totals=totals, temperature=temperature, bf16=cfg.bf16, ref_model=ref_model
                )
                if mb is None:  # an FSDP2 filler: its collectives run, its gradient is zero
                    loss = loss * 0.0
                else:
                    acc = {k: acc[k] + sums[k] for k in SUMS}
                    diff_max = max(diff_max, sums["diff_max"])
                loss.backward()
                if on_progress is not None and mb is not None:
                    done += len(mb)
                    on_progress(done, total)
            dist.sum_grads(model)
            acc = dict(zip(SUMS, dist.sum([acc[k] for k in SUMS]), strict=True))
            diff_max = dist.max(diff_max)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            grad_norm = grad_norm.full_tensor() if isinstance(grad_norm, DTensor) else grad_norm  # FSDP2: a replicated DTensor
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            scheduler.step()
            n = max(totals.tokens, 1)
            first = not metrics  # weights untouched so far: trainer vs engine logprobs
            metrics.append(
                {
                    "epoch": epoch,
                    "step": len(metrics),
                    "loss": acc["loss"],
                    "policy_loss": acc["pg"],
                    "kl": acc["kl"] / n if ref_model is not None and cfg.kl_beta > 0 else None,
                    "clip_frac_low": acc["clip_low"] / n,
                    "clip_frac_high": acc["clip_high"] / n,
                    "ratio_mean": acc["ratio"] / n,
                    "approx_kl": acc["approx_kl"] / n,
                    "entropy": acc["entropy"] / n,
                    "grad_norm": float(grad_norm),
                    "lr": lr,
                    "tokens": totals.tokens,
                    "sequences": totals.sequences,
                    "micro_batches": len(mbs),
                    "truncated_masked": n_truncated,
                    "logprob_diff_mean": acc["diff_sum"] / n if first else None,
                    "logprob_diff_max": diff_max if first else None,
                    "tis_weight_mean": acc["tis"] / n if cfg.tis_cap > 0 and cfg.objective == "grpo" else None,
                    "seconds": time.perf_counter() - t0,
                    "peak_memory_mb": _peak_memory_mb(device),
                    "world_size": dist.world,
                }
            )
    model.eval()
    return metrics


def fill_missing_logprobs(
    model: PreTrainedModel | ResponseLogprobs,
    rows: list[TrainRow],
    temperature: float,
    pad_id: int,
    cfg: UpdateSection,
    device: torch.device,
) -> tuple[list[TrainRow], int]:
    """Rows without sampling logprobs (imported responses) get them from the current policy v_i, in
    one no-grad pass before any step: their ratio starts at 1, as on-policy samples' does.
    Returns the rows and how many were filled."""
    missing = [k for k, r in enumerate(rows) if len(r.old_logprobs) != len(r.response_ids)]
    if not missing:
        return rows, 0
    out = list(rows)
    model.eval()
    with torch.no_grad():
        by_length = sorted(missing, key=lambda k: rows[k].length)
        for start in range(0, len(by_length), 64):  # 64 rows a pass, padded: bounded memory, few passes
            idx = by_length[start : start + 64]
            batch = collate([replace(rows[k], old_logprobs=[0.0] * len(rows[k].response_ids)) for k in idx], pad_id, device)
            lp, _ = response_logprobs(model, batch, temperature, cfg.bf16)  # (b, T-1)
            for b, k in enumerate(idx):
                P, R = len(rows[k].prompt_ids), len(rows[k].response_ids)
                out[k] = replace(rows[k], old_logprobs=lp[b, P - 1 : P + R - 1].tolist())
    return out, len(missing)


def _with_trainer_old_logprobs(
    model: PreTrainedModel | ResponseLogprobs,
    rows: list[TrainRow],
    temperature: float,
    pad_id: int,
    cfg: UpdateSection,
    device: torch.device,
) -> list[TrainRow]:
    """TIS needs pi_old as the *trainer* computes it; one no-grad pass before any step (every rank
    runs every micro-batch: the same passes everywhere, as FSDP2's collectives need)."""
    model.eval()
    out = []
    with torch.no_grad():
        for mb in micro_batches(rows, cfg.micro_batch_tokens, packed=cfg.packing):
            batch = collate(mb, pad_id, device, packed=cfg.packing)
            lp, _ = response_logprobs(model, batch, temperature, cfg.bf16)  # (b, T-1)
            for b, r in enumerate(mb):
                P, R = len(r.prompt_ids), len(r.response_ids)
                out.append(replace(r, trainer_old_logprobs=lp[b, P - 1 : P + R - 1].tolist()))
    return out


# ---- one iteration's update, in this process or in each torchrun rank ---------------------


class UpdateSpec(BaseModel):
    """Everything an update needs, JSON-serialisable for the torchrun workers."""

    config: dict
    iteration: int
    seed: int
    policy_in: str
    reference: str  # policy v0, used when kl_beta > 0
    rollout_files: list[str]
    score_files: list[str]
    policy_out: str
    metrics_out: str


def run_update(spec: UpdateSpec) -> dict:
    """Train v_i -> v_{i+1}; rank 0 writes the checkpoint and the metrics. Returns stats."""
    cfg = Config.model_validate(spec.config)
    u = cfg.update
    dist = Dist.current()
    if u.nproc > 1 and dist.world == 1:
        raise RuntimeError("update.nproc > 1 must run under torchrun (rlvr.train.worker), not in-process")
    device = resolve_device(u.device)
    if device.type == "cuda" and dist.world > 1:
        device = torch.device("cuda", dist.rank % torch.cuda.device_count())
        torch.cuda.set_device(device)  # FSDP2's default device mesh takes the current device
    rows, temperature, stats = load_rows([Path(f) for f in spec.rollout_files], [Path(f) for f in spec.score_files], u.objective)
    model, tok = load_policy(Path(spec.policy_in), device)
    if device.type == "cpu":
        own_memory(model)
    if u.gradient_checkpointing:
        enable_gradient_checkpointing(model)
    net: PreTrainedModel | ResponseLogprobs = model
    if u.strategy == "fsdp2" and dist.world > 1:  # one process has nothing to shard over
        net, dist = shard_fsdp2(model), replace(dist, sharded=True)
    ref = None
    if u.kl_beta > 0:  # loaded only when used
        ref, _ = load_policy(Path(spec.reference), device)
        ref.eval().requires_grad_(False)
    opt, sched, global_step = make_optimizer(model, u, Path(spec.policy_in))
    torch.manual_seed(spec.seed)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    # imported responses without logprobs: the current policy's, before any step (every rank alike)
    rows, stats["logprobs_filled"] = fill_missing_logprobs(net, rows, temperature, pad, u, device)
    steps = (
        grpo_steps(
            net,
            opt,
            sched,
            rows,
            cfg=u,
            temperature=temperature,
            pad_id=pad,
            norm_constant=float(cfg.rollout.max_new_tokens),
            ref_model=ref,
            dist=dist,
            on_progress=lambda done, total: progress("update", spec.iteration, done=done, total=total, unit="sequences"),
        )
        if rows
        else []
    )
    if not steps:  # every group had equal rewards: nothing to learn; v_{i+1} = v_i, recorded as such
        steps = [{"lr": opt.param_groups[0]["lr"], "peak_memory_mb": _peak_memory_mb(device), "world_size": dist.world}]
    rows_out = [
        asdict(StepMetrics(iteration=spec.iteration, global_step=global_step + k, **s, **stats)) for k, s in enumerate(steps)
    ]
    global_step += sum(s.get("sequences", 0) > 0 for s in steps)
    save_checkpoint(
        model, tok, opt, sched, global_step=global_step, next_iteration=spec.iteration + 1, path=Path(spec.policy_out), dist=dist
    )
    if dist.rank == 0:
        write_table(rows_out, UPDATES, Path(spec.metrics_out))
    return {**stats, "sequences": len(rows), "steps": len(steps), "loss": rows_out[-1]["loss"], "world_size": dist.world}


def policy_token_logprobs(model: PreTrainedModel, batch: dict[str, torch.Tensor], temperature: float = 1.0) -> torch.Tensor:
    """Logprobs of a collated batch's tokens under `model`: (B, T-1)."""
    return grpo.token_logprobs(_forward(model, batch, False)[:, :-1], batch["ids"][:, 1:], temperature)  # full logits: the oracle


def read_metrics(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()
