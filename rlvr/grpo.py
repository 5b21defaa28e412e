"""GRPO maths as small pure functions: shapes on every line, (value, metrics) returned.

GRPO: Shao et al. 2024 (DeepSeekMath), sec. 4.1; the clipped surrogate is PPO's
(Schulman et al. 2017, eq. 7) applied per token with group-relative advantages.
Token-mean aggregation as in DAPO (Yu et al. 2025, eq. 8): every token of the batch weighs the same.
The SQL in sql/verify.sql computes the same advantages; `group_advantages` is its reference.

Tests: tests/test_grpo.py (hand-computed cases and loop references).
"""

from __future__ import annotations

import torch


def group_advantages(rewards: torch.Tensor, group: torch.Tensor, eps: float = 1e-6) -> tuple[torch.Tensor, dict]:
    """(r - mean_g) / (std_g + eps) with the sample std of each group; singleton groups get 0.

    rewards: (N,) float; group: (N,) int64 group index. Returns advantages (N,).
    """
    G = int(group.max()) + 1 if group.numel() else 0
    count = torch.zeros(G, dtype=rewards.dtype).index_add_(0, group, torch.ones_like(rewards))  # (G,)
    mean = torch.zeros(G, dtype=rewards.dtype).index_add_(0, group, rewards) / count  # (G,)
    dev2 = (rewards - mean[group]) ** 2  # (N,)
    var = torch.zeros(G, dtype=rewards.dtype).index_add_(0, group, dev2) / (count - 1).clamp(min=1)  # (G,)
    std = var.sqrt()  # (G,)
    adv = (rewards - mean[group]) / (std[group] + eps)  # (N,)
    return adv, {"groups": G, "groups_zero_std": int((std == 0).sum())}


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log p(target) under softmax(logits / T). logits: (B, T, V); targets: (B, T) -> (B, T)."""
    scaled = logits.float() / (temperature if temperature > 0 else 1.0)  # (B, T, V)
    return torch.log_softmax(scaled, dim=-1).gather(-1, targets[..., None]).squeeze(-1)  # (B, T)


def clipped_policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float,
) -> tuple[torch.Tensor, dict]:
    """Per-token PPO/GRPO clipped surrogate, to be minimised.

    logp, old_logp, mask: (B, T); advantages: (B,). Returns loss (B, T), zero where mask is 0.
    """
    ratio = torch.exp(logp - old_logp)  # (B, T)
    adv = advantages[:, None]  # (B, 1)
    unclipped = ratio * adv  # (B, T)
    clipped = ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv  # (B, T)
    loss = -torch.minimum(unclipped, clipped) * mask  # (B, T)
    with torch.no_grad():
        m = mask.bool()
        n = m.sum().clamp(min=1)
        metrics = {
            "clip_frac": float(((clipped < unclipped) & m).sum() / n),  # the min picked the clipped side
            "ratio_sum": float((ratio * mask).sum()),
            "approx_kl_sum": float(((old_logp - logp) * mask).sum()),
        }
    return loss, metrics


def token_mean(loss: torch.Tensor, mask: torch.Tensor, total_tokens: int) -> torch.Tensor:
    """Sum of per-token loss over a micro-batch / tokens of the whole mini-batch (B, T) -> ().

    Dividing by the mini-batch total (not the micro-batch's) makes gradient accumulation over
    micro-batches equal to one big batch."""
    return (loss * mask).sum() / max(total_tokens, 1)
