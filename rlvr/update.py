"""Update: one GRPO optimisation pass of the policy on an iteration's scored rollouts.

Reads training rows with DuckDB (sql/update_batch.sql), recomputes logprobs of the sampled
tokens with the current weights, minimises the clipped surrogate (rlvr.grpo) against the
rollout's logprobs with token-mean aggregation, and steps AdamW. Micro-batches are
length-sorted and accumulate gradients; `minibatches` > 1 takes several optimiser steps.

Test: tests/test_update.py (one update raises the logprob of a positively-advantaged response).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from rlvr import grpo, sql
from rlvr.config import UpdateSection

OPTIMIZER_FILE = "optimizer.pt"


@dataclass(frozen=True)
class TrainRow:
    prompt_ids: list[int]
    response_ids: list[int]
    old_logprobs: list[float]
    advantage: float


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("update.device = 'cuda' but torch sees no CUDA device; set update.device = 'auto' or 'cpu'")
    return torch.device(name)


def load_rows(rollout_files: list[Path], score_files: list[Path]) -> tuple[list[TrainRow], float, dict]:
    """Training rows (signal-carrying groups only), the sampling temperature, and group stats."""
    con = duckdb.connect()
    p = {"rollouts": [str(f) for f in rollout_files], "scores": [str(f) for f in score_files]}
    rows = con.execute(sql.load("update_batch"), p).fetchall()
    used, dropped, reward_mean = con.execute(sql.load("update_stats"), {"scores": p["scores"]}).fetchone()
    temps = {r[5] for r in rows}
    if len(temps) > 1:
        raise ValueError(f"rollout rows of one iteration have several temperatures {sorted(temps)}; expected one")
    out = [TrainRow(list(r[2]), list(r[3]), list(r[4]), float(r[6])) for r in rows]
    stats = {"groups_used": used or 0, "groups_dropped": dropped or 0, "reward_mean": float(reward_mean or 0.0)}
    return out, (temps.pop() if temps else 1.0), stats


def collate(rows: list[TrainRow], pad_id: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded prompt+response ids, and response-aligned masks for next-token logprobs."""
    T = max(len(r.prompt_ids) + len(r.response_ids) for r in rows)
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
    return {k: v.to(device) for k, v in dict(ids=ids, attn=attn, mask=mask, old=old, adv=adv).items()}


def policy_logprobs(model: PreTrainedModel, batch: dict[str, torch.Tensor], temperature: float) -> torch.Tensor:
    logits = model(input_ids=batch["ids"], attention_mask=batch["attn"]).logits  # (B, T, V)
    return grpo.token_logprobs(logits[:, :-1], batch["ids"][:, 1:], temperature)  # (B, T-1)


def grpo_steps(
    model: PreTrainedModel,
    optimizer: torch.optim.Optimizer,
    rows: list[TrainRow],
    *,
    cfg: UpdateSection,
    temperature: float,
    pad_id: int,
) -> list[dict]:
    """Optimiser steps over `rows`; returns one metrics dict per step."""
    device = next(model.parameters()).device
    model.train()
    metrics = []
    parts = [rows[k :: cfg.minibatches] for k in range(cfg.minibatches)]
    for step, part in enumerate(p for p in parts if p):
        t0 = time.perf_counter()
        total = sum(len(r.response_ids) for r in part)
        ordered = sorted(part, key=lambda r: len(r.prompt_ids) + len(r.response_ids))  # less padding
        optimizer.zero_grad(set_to_none=True)
        loss_sum, clip_n, ratio_sum, kl_sum = 0.0, 0.0, 0.0, 0.0
        for s in range(0, len(ordered), cfg.micro_batch_size):
            batch = collate(ordered[s : s + cfg.micro_batch_size], pad_id, device)
            logp = policy_logprobs(model, batch, temperature)  # (b, T-1)
            per_tok, m = grpo.clipped_policy_loss(logp, batch["old"], batch["adv"], batch["mask"], clip_eps=cfg.clip_eps)
            loss = grpo.token_mean(per_tok, batch["mask"], total)  # ()
            loss.backward()
            n = float(batch["mask"].sum())
            loss_sum += float(loss.detach())
            clip_n += m["clip_frac"] * n
            ratio_sum += m["ratio_sum"]
            kl_sum += m["approx_kl_sum"]
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        optimizer.step()
        metrics.append(
            {
                "step": step,
                "loss": loss_sum,
                "policy_loss": loss_sum,  # = loss until KL / entropy terms arrive
                "clip_frac": clip_n / max(total, 1),
                "ratio_mean": ratio_sum / max(total, 1),
                "approx_kl": kl_sum / max(total, 1),
                "grad_norm": float(grad_norm),
                "lr": optimizer.param_groups[0]["lr"],
                "tokens": total,
                "sequences": len(part),
                "seconds": time.perf_counter() - t0,
            }
        )
    model.eval()
    return metrics


def load_policy(path: Path, device: torch.device) -> tuple[PreTrainedModel, AutoTokenizer]:
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device)
    return model, AutoTokenizer.from_pretrained(path)


def make_optimizer(model: PreTrainedModel, cfg: UpdateSection, state_from: Path | None) -> torch.optim.Optimizer:
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    if state_from is not None and (state_from / OPTIMIZER_FILE).is_file():
        opt.load_state_dict(torch.load(state_from / OPTIMIZER_FILE, map_location="cpu", weights_only=True))
        for g in opt.param_groups:  # the config is frozen per run, but be explicit
            g["lr"], g["betas"], g["weight_decay"] = cfg.lr, cfg.betas, cfg.weight_decay
    return opt


def save_policy(model: PreTrainedModel, tok: AutoTokenizer, opt: torch.optim.Optimizer, path: Path) -> None:
    model.save_pretrained(path)
    tok.save_pretrained(path)
    torch.save(opt.state_dict(), path / OPTIMIZER_FILE)
