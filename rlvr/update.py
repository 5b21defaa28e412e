"""Update: GRPO optimisation of policy v_i on iteration i's scored rollouts -> v_{i+1}.

Reads the training rows with DuckDB (sql/update_batch.sql: groups with reward variance only),
then for each epoch (mu) and mini-batch: token-budget micro-batches, length-sorted so padding is
small, recompute the sampled tokens' logprobs, the clipped surrogate (rlvr.grpo) against the
rollout's logprobs, optional KL to v0 and truncated importance sampling, gradient accumulation
with whole-mini-batch normalisers, clipping, AdamW and the LR schedule.

Checkpoint = the HF folder + trainer_state.pt (optimiser, scheduler, global step, RNG, data
cursor). Data parallel: under torchrun each rank takes every world-th micro-batch and gradients
are summed with all_reduce before the step, so N processes take the same step as one.

    python -m torch.distributed.run --standalone --nproc_per_node 2 -m rlvr.update_worker SPEC.json

Tests: tests/test_update.py (gradient direction, accumulation, 1 vs 2 processes, exact resume).
"""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import torch
import torch.distributed as tdist
import torch.utils.checkpoint
from pydantic import BaseModel
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from rlvr import grpo, sql
from rlvr.config import Config, UpdateSection
from rlvr.schema import UPDATES
from rlvr.store import write_table

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


def load_rows(rollout_files: list[Path], score_files: list[Path]) -> tuple[list[TrainRow], float, dict]:
    """Training rows (signal-carrying groups only), the sampling temperature, and group stats."""
    con = duckdb.connect()
    p = {"rollouts": [str(f) for f in rollout_files], "scores": [str(f) for f in score_files]}
    rows = con.execute(sql.load("update_batch"), p).fetchall()
    used, dropped, reward_mean = con.execute(sql.load("update_stats"), {"scores": p["scores"]}).fetchone()
    temps = {r[5] for r in rows}
    if len(temps) > 1:
        raise ValueError(f"rollout rows of one iteration have several temperatures {sorted(temps)}; expected one")
    out = [TrainRow(list(r[2]), list(r[3]), list(r[4]), float(r[6]), r[7] == "length") for r in rows]
    stats = {"groups_used": used or 0, "groups_dropped": dropped or 0, "reward_mean": float(reward_mean or 0.0)}
    return out, (temps.pop() if temps else 1.0), stats


def micro_batches(rows: list[TrainRow], token_budget: int) -> list[list[TrainRow]]:
    """Length-sorted micro-batches whose padded size (rows x longest) stays within the budget
    (a row longer than the budget gets a micro-batch of its own)."""
    out: list[list[TrainRow]] = []
    for r in sorted(rows, key=lambda r: r.length):
        if out and (len(out[-1]) + 1) * r.length <= token_budget:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def collate(rows: list[TrainRow], pad_id: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded prompt+response ids, and response-aligned masks for next-token logprobs."""
    T = max(r.length for r in rows)
    B = len(rows)
    ids = torch.full((B, T), pad_id, dtype=torch.long)  # (B, T)
    attn = torch.zeros((B, T), dtype=torch.long)  # (B, T)
    mask = torch.zeros((B, T - 1))  # (B, T-1): 1 where position t predicts a response token
    old = torch.zeros((B, T - 1))  # (B, T-1)
    for b, r in enumerate(rows):
        P, R = len(r.prompt_ids), len(r.response_ids)
        ids[b, : P + R] = torch.tensor(r.prompt_ids + r.response_ids)
        attn[b, : P + R] = 1
        mask[b, P - 1 : P + R - 1] = 1
        old[b, P - 1 : P + R - 1] = torch.tensor(r.old_logprobs)
    adv = torch.tensor([r.advantage for r in rows])  # (B,)
    out = dict(ids=ids, attn=attn, mask=mask, old=old, adv=adv)
    if rows[0].trainer_old_logprobs is not None:
        trainer_old = torch.zeros((B, T - 1))  # (B, T-1)
        for b, r in enumerate(rows):
            P, R = len(r.prompt_ids), len(r.response_ids)
            trainer_old[b, P - 1 : P + R - 1] = torch.tensor(r.trainer_old_logprobs)
        out["trainer_old"] = trainer_old
    return {k: v.to(device) for k, v in out.items()}


# ---- model, optimiser, schedule -----------------------------------------------------------


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("update.device = 'cuda' but torch sees no CUDA device; set update.device = 'auto' or 'cpu'")
    return torch.device(name)


def load_policy(path: Path, device: torch.device) -> tuple[PreTrainedModel, AutoTokenizer]:
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device)
    return model, AutoTokenizer.from_pretrained(path)


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
    returns the run's global optimiser step."""
    # fused: one kernel for all parameters (CPU and CUDA in torch >= 2.4); the per-tensor loop was
    # ~9% of a CPU step (bench/update.py, py-spy)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg))
    step = 0
    if state_from is not None and (state_from / TRAINER_STATE).is_file():
        state = torch.load(state_from / TRAINER_STATE, map_location="cpu", weights_only=True)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        step = int(state["global_step"])
    return opt, sched, step


def save_checkpoint(model: PreTrainedModel, tok: AutoTokenizer, opt: torch.optim.Optimizer,
                    sched: torch.optim.lr_scheduler.LambdaLR, *, global_step: int, next_iteration: int,
                    path: Path) -> None:  # fmt: skip
    model.save_pretrained(path)
    tok.save_pretrained(path)
    state = {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "global_step": global_step,
             "next_iteration": next_iteration, "rng_cpu": torch.get_rng_state()}  # fmt: skip
    torch.save(state, path / TRAINER_STATE)


# ---- data parallel ------------------------------------------------------------------------


@dataclass(frozen=True)
class Dist:
    rank: int = 0
    world: int = 1

    @staticmethod
    def current() -> Dist:
        if tdist.is_available() and tdist.is_initialized():
            return Dist(tdist.get_rank(), tdist.get_world_size())
        return Dist()

    def sum_grads(self, model: torch.nn.Module) -> None:
        if self.world == 1:
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


# ---- the optimisation loop ----------------------------------------------------------------


def _forward(model: PreTrainedModel, batch: dict[str, torch.Tensor], bf16: bool) -> torch.Tensor:
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16 and batch["ids"].is_cuda):
        return model(input_ids=batch["ids"], attention_mask=batch["attn"]).logits  # (B, T, V)


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


def _chunk_logprobs(h: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                    temperature: float) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(n, H) hidden states -> logprob of each target (n,) and entropy (n,), via (n, V) logits."""
    logits = torch.nn.functional.linear(h, weight, bias).float() / (temperature if temperature > 0 else 1.0)  # (n, V)
    logz = torch.logsumexp(logits, dim=-1)  # (n,)
    lp = logits.gather(-1, targets[:, None]).squeeze(-1) - logz  # (n,)
    with torch.no_grad():
        probs = torch.softmax(logits, dim=-1)  # (n, V)
        entropy = logz - (probs * logits).sum(-1)  # (n,)  H = log Z - E_p[logit]
    return lp, entropy


def response_logprobs(model: PreTrainedModel, batch: dict[str, torch.Tensor], temperature: float,
                      bf16: bool = False) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Logprobs (B, T-1) of the batch's response tokens (0 elsewhere) and their entropies (B, T-1).

    The transformer runs once; the LM head runs only on response positions, in chunks that are
    recomputed in backward (torch.utils.checkpoint), so the (tokens, vocab) logits never exist for
    the whole micro-batch: with a 49k vocabulary they, not the layers, dominated peak memory
    (bench/update.py). TRL's `logits_to_keep` and chunked log-prob head follow the same idea."""
    mask = batch["mask"].bool()  # (B, T-1)
    targets = batch["ids"][:, 1:]  # (B, T-1)
    head = _plain_linear_head(model)
    if head is None:  # generic path: full logits
        logits = _forward(model, batch, bf16)[:, :-1]  # (B, T-1, V)
        with torch.no_grad():
            ent = grpo.token_entropy(logits, temperature) * mask  # (B, T-1)
        return grpo.token_logprobs(logits, targets, temperature) * mask, ent
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16 and batch["ids"].is_cuda):
        base = getattr(model, model.base_model_prefix)
        hidden = base(input_ids=batch["ids"], attention_mask=batch["attn"]).last_hidden_state[:, :-1]  # (B, T-1, H)
    h, tgt = hidden[mask], targets[mask]  # (N, H), (N,)
    lps, ents = [], []
    for s in range(0, h.shape[0], HEAD_CHUNK_TOKENS):
        lp, ent = torch.utils.checkpoint.checkpoint(_chunk_logprobs, h[s : s + HEAD_CHUNK_TOKENS], tgt[s : s + HEAD_CHUNK_TOKENS],
                                                    head.weight, head.bias, temperature, use_reentrant=False)  # fmt: skip
        lps.append(lp)
        ents.append(ent.detach())
    logp = torch.zeros(mask.shape, dtype=torch.float32, device=h.device).masked_scatter(mask, torch.cat(lps))  # (B, T-1)
    ent = torch.zeros(mask.shape, dtype=torch.float32, device=h.device).masked_scatter(mask, torch.cat(ents))  # (B, T-1)
    return logp, ent


def _peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def grpo_steps(
    model: PreTrainedModel,
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
) -> list[dict]:
    """All optimiser steps of one iteration; one metrics dict per step."""
    device = next(model.parameters()).device
    clip = grpo.ClipConfig(cfg.eps_low, cfg.eps_high, cfg.dual_clip or None)
    n_truncated = sum(r.truncated for r in rows) if cfg.mask_truncated else 0
    if cfg.mask_truncated:
        rows = [r for r in rows if not r.truncated]
    if cfg.tis_cap > 0:
        rows = _with_trainer_old_logprobs(model, rows, temperature, pad_id, cfg, device)
    metrics: list[dict] = []
    measured_mismatch = False
    for epoch in range(cfg.epochs):
        parts = [rows[k :: cfg.minibatches] for k in range(cfg.minibatches)]
        for part in (p for p in parts if p):
            t0 = time.perf_counter()
            model.train()
            totals = grpo.Totals(tokens=sum(len(r.response_ids) for r in part), sequences=len(part),
                                 norm_constant=norm_constant)  # fmt: skip
            mbs = micro_batches(part, cfg.micro_batch_tokens)
            optimizer.zero_grad(set_to_none=True)
            acc = dict(loss=0.0, pg=0.0, kl=0.0, clip_low=0.0, clip_high=0.0, ratio=0.0, approx_kl=0.0, entropy=0.0,
                       tis=0.0, diff_sum=0.0)  # fmt: skip
            diff_max = 0.0
            for mb in mbs[dist.rank :: dist.world]:
                batch = collate(mb, pad_id, device)
                logp, entropy = response_logprobs(model, batch, temperature, cfg.bf16)  # (b, T-1), (b, T-1)
                mask = batch["mask"]  # (b, T-1)
                old = batch["trainer_old"] if "trainer_old" in batch else batch["old"]  # (b, T-1)
                per_tok, m = grpo.policy_loss(logp, old, batch["adv"], mask, clip)  # (b, T-1)
                if cfg.tis_cap > 0:
                    w = grpo.truncated_is_weights(old, batch["old"], cfg.tis_cap)  # (b, T-1)
                    per_tok = per_tok * w
                    acc["tis"] += float((w * mask).sum())
                pg = grpo.aggregate(per_tok, mask, cfg.aggregation, totals)  # ()
                loss = pg
                if ref_model is not None and cfg.kl_beta > 0:
                    with torch.no_grad():
                        ref_lp, _ = response_logprobs(ref_model, batch, temperature, cfg.bf16)  # (b, T-1)
                    kl = grpo.kl_estimate(logp, ref_lp, cfg.kl_estimator)  # (b, T-1)
                    kl_term = grpo.aggregate(kl, mask, cfg.aggregation, totals)  # ()
                    loss = loss + cfg.kl_beta * kl_term
                    acc["kl"] += float((kl.detach() * mask).sum())
                loss.backward()
                with torch.no_grad():
                    acc["loss"] += float(loss)
                    acc["pg"] += float(pg)
                    acc["clip_low"] += m["clip_low_tokens"]
                    acc["clip_high"] += m["clip_high_tokens"]
                    acc["ratio"] += m["ratio_sum"]
                    acc["approx_kl"] += float(((batch["old"] - logp) * mask).sum())
                    acc["entropy"] += float(entropy.sum())
                    if not measured_mismatch:  # weights untouched so far: trainer vs engine logprobs
                        d = (logp - batch["old"]).abs() * mask
                        acc["diff_sum"] += float(d.sum())
                        diff_max = max(diff_max, float(d.max()))
            dist.sum_grads(model)
            keys = list(acc)
            acc = dict(zip(keys, dist.sum([acc[k] for k in keys]), strict=True))
            diff_max = dist.max(diff_max)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            scheduler.step()
            n = max(totals.tokens, 1)
            metrics.append({
                "epoch": epoch, "step": len(metrics), "loss": acc["loss"], "policy_loss": acc["pg"],
                "kl": acc["kl"] / n if ref_model is not None and cfg.kl_beta > 0 else None,
                "clip_frac_low": acc["clip_low"] / n, "clip_frac_high": acc["clip_high"] / n,
                "ratio_mean": acc["ratio"] / n, "approx_kl": acc["approx_kl"] / n, "entropy": acc["entropy"] / n,
                "grad_norm": float(grad_norm), "lr": lr, "tokens": totals.tokens, "sequences": totals.sequences,
                "micro_batches": len(mbs), "truncated_masked": n_truncated,
                "logprob_diff_mean": None if measured_mismatch else acc["diff_sum"] / n,
                "logprob_diff_max": None if measured_mismatch else diff_max,
                "tis_weight_mean": acc["tis"] / n if cfg.tis_cap > 0 else None,
                "seconds": time.perf_counter() - t0, "peak_memory_mb": _peak_memory_mb(device), "world_size": dist.world,
            })  # fmt: skip
            measured_mismatch = True
    model.eval()
    return metrics


def _with_trainer_old_logprobs(model: PreTrainedModel, rows: list[TrainRow], temperature: float, pad_id: int,
                               cfg: UpdateSection, device: torch.device) -> list[TrainRow]:  # fmt: skip
    """TIS needs pi_old as the *trainer* computes it; one no-grad pass before any step."""
    model.eval()
    out = []
    with torch.no_grad():
        for mb in micro_batches(rows, cfg.micro_batch_tokens):
            batch = collate(mb, pad_id, device)
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
        raise RuntimeError("update.nproc > 1 must run under torchrun (rlvr.update_worker), not in-process")
    device = resolve_device(u.device)
    if device.type == "cuda" and dist.world > 1:
        device = torch.device("cuda", dist.rank % torch.cuda.device_count())
    rows, temperature, stats = load_rows([Path(f) for f in spec.rollout_files], [Path(f) for f in spec.score_files])
    model, tok = load_policy(Path(spec.policy_in), device)
    if u.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    ref = None
    if u.kl_beta > 0:  # loaded only when used
        ref, _ = load_policy(Path(spec.reference), device)
        ref.eval().requires_grad_(False)
    opt, sched, global_step = make_optimizer(model, u, Path(spec.policy_in))
    torch.manual_seed(spec.seed)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    steps = grpo_steps(model, opt, sched, rows, cfg=u, temperature=temperature, pad_id=pad,
                       norm_constant=float(cfg.rollout.max_new_tokens), ref_model=ref, dist=dist) if rows else []  # fmt: skip
    if not steps:  # every group had equal rewards: nothing to learn; v_{i+1} = v_i, recorded as such
        steps = [dict(epoch=0, step=0, loss=0.0, policy_loss=0.0, kl=None, clip_frac_low=0.0, clip_frac_high=0.0,
                      ratio_mean=1.0, approx_kl=0.0, entropy=0.0, grad_norm=0.0, lr=opt.param_groups[0]["lr"],
                      tokens=0, sequences=0, micro_batches=0, truncated_masked=0, logprob_diff_mean=None,
                      logprob_diff_max=None, tis_weight_mean=None, seconds=0.0,
                      peak_memory_mb=_peak_memory_mb(device), world_size=dist.world)]  # fmt: skip
    rows_out = [{"iteration": spec.iteration, "global_step": global_step + k, **s, **stats} for k, s in enumerate(steps)]
    global_step += sum(s["sequences"] > 0 for s in steps)
    if dist.rank == 0:
        save_checkpoint(model, tok, opt, sched, global_step=global_step, next_iteration=spec.iteration + 1,
                        path=Path(spec.policy_out))  # fmt: skip
        write_table(rows_out, UPDATES, Path(spec.metrics_out))
    return {**stats, "sequences": len(rows), "steps": len(steps), "loss": steps[-1]["loss"], "world_size": dist.world}


def policy_token_logprobs(model: PreTrainedModel, batch: dict[str, torch.Tensor], temperature: float = 1.0) -> torch.Tensor:
    """Logprobs of a collated batch's tokens under `model`: (B, T-1)."""
    return grpo.token_logprobs(_forward(model, batch, False)[:, :-1], batch["ids"][:, 1:], temperature)  # full logits: the oracle


def read_metrics(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()
