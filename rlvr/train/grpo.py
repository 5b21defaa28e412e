"""GRPO maths as small pure functions: shapes on every line, (value, metrics) returned.

One function per idea, each citing its source:
- advantages: GRPO (Shao et al. 2024, DeepSeekMath, sec. 4.1.2), Dr. GRPO (Liu et al. 2025,
  "Understanding R1-Zero-Like Training", sec. 3.1: no std division), RLOO (Ahmadian et al. 2024,
  "Back to Basics", eq. 5: leave-one-out baseline). The verify SQL computes the configured one;
  these are its tested references.
- policy loss: PPO's clipped surrogate (Schulman et al. 2017, eq. 7) with separate
  eps_low / eps_high (DAPO clip-higher, Yu et al. 2025, eq. 10) and optional dual clip for
  negative advantages (Ye et al. 2020, "Mastering Complex Control in MOBA Games", eq. 5).
- aggregation: token mean (DAPO eq. 12), per-sequence mean (GRPO eq. 3), and a sum divided by
  a constant (Dr. GRPO sec. 3.1), all normalised by whole-mini-batch totals so that gradient
  accumulation over micro-batches equals one big batch.
- KL to a reference: k1, k2, k3 estimators (Schulman 2020, "Approximating KL Divergence").
- rejection-sampling fine-tuning (RFT; Yuan et al. 2023, "Scaling Relationship on Learning
  Mathematical Reasoning with Large Language Models", sec. 4): cross-entropy on the responses the
  verifier accepted, the standard offline baseline (update.objective = "rft").
- truncated importance sampling for engine/trainer mismatch (Yao et al. 2025, "Your Efficient
  RL Framework Secretly Brings You Off-Policy RL Training"), and its masked form (MIS), which also
  corrects the staleness of asynchronous rollouts (rollout.max_staleness).
- objective: the one place these compose into a micro-batch's loss (clip, dual clip, TIS, KL,
  aggregation); rlvr/train/loop.py only runs the forward passes and the optimiser around it.

The advantages the update trains on are computed once, by the verify SQL (verify_groups.sql);
group_advantages is their Python form, and tests/unit/train/test_grpo.py checks the two agree. The
zero-variance group filter is the update's batch query (rlvr/sql/update_batch.sql).

Tests: tests/unit/train/test_grpo.py (hand-computed cases and plain-loop references).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

Estimator = Literal["grpo", "dr_grpo", "rloo"]
Aggregation = Literal["token_mean", "seq_mean", "seq_sum_norm"]
KLKind = Literal["k1", "k2", "k3"]


# ---- advantages ---------------------------------------------------------------------------


def _group_sums(x: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    return torch.zeros(n_groups, dtype=x.dtype).index_add_(0, group, x)  # (G,)


def group_advantages(
    rewards: torch.Tensor, group: torch.Tensor, eps: float = 1e-6, estimator: Estimator = "grpo"
) -> tuple[torch.Tensor, dict]:
    """Group-relative advantages. rewards: (N,) float; group: (N,) int64 ids in [0, G).

    grpo:    (r - mean_g) / (std_g + eps), std the sample std (torch.std, as TRL and verl)
    dr_grpo: r - mean_g
    rloo:    r - mean of the *other* rewards of the group = n/(n-1) * (r - mean_g)
    Singleton groups and zero-variance groups get 0 under every estimator.
    """
    G = int(group.max()) + 1 if group.numel() else 0
    count = _group_sums(torch.ones_like(rewards), group, G)  # (G,)
    mean = _group_sums(rewards, group, G) / count.clamp(min=1)  # (G,)
    centred = rewards - mean[group]  # (N,)
    var = _group_sums(centred**2, group, G) / (count - 1).clamp(min=1)  # (G,)
    std = var.sqrt()  # (G,)
    n = count[group]  # (N,)
    if estimator == "grpo":
        adv = centred / (std[group] + eps)  # (N,)
    elif estimator == "dr_grpo":
        adv = centred  # (N,)
    elif estimator == "rloo":
        adv = torch.where(n > 1, centred * n / (n - 1).clamp(min=1), torch.zeros_like(centred))  # (N,)
    else:
        raise ValueError(f"unknown advantage estimator {estimator!r}; use grpo, dr_grpo or rloo")
    return adv, {"groups": G, "groups_zero_std": int((std == 0).sum())}


# ---- per-token quantities -----------------------------------------------------------------


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log p(target) under softmax(logits / T). logits: (B, T, V); targets: (B, T) -> (B, T)."""
    scaled = logits.float() / (temperature if temperature > 0 else 1.0)  # (B, T, V)
    return torch.log_softmax(scaled, dim=-1).gather(-1, targets[..., None]).squeeze(-1)  # (B, T)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy of softmax(logits / T) at each position. (B, T, V) -> (B, T)."""
    logp = torch.log_softmax(logits.float() / (temperature if temperature > 0 else 1.0), dim=-1)  # (B, T, V)
    return -(logp.exp() * logp).sum(-1)  # (B, T)


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: KLKind) -> torch.Tensor:
    """Per-token estimate of KL(pi || ref) from samples of pi. (B, T), (B, T) -> (B, T).

    With log_r = ref_logp - logp: k1 = -log_r (unbiased, can be < 0), k2 = log_r^2 / 2,
    k3 = exp(log_r) - 1 - log_r (unbiased and >= 0; the GRPO paper's choice, eq. 4)."""
    log_r = ref_logp - logp  # (B, T)
    if kind == "k1":
        return -log_r
    if kind == "k2":
        return 0.5 * log_r**2
    if kind == "k3":
        return torch.exp(log_r) - 1 - log_r
    raise ValueError(f"unknown KL estimator {kind!r}; use k1, k2 or k3")


def truncated_is_weights(trainer_old_logp: torch.Tensor, rollout_logp: torch.Tensor, cap: float) -> torch.Tensor:
    """min(pi_trainer_old / pi_rollout, cap) per token, no gradient. (B, T) -> (B, T)."""
    return torch.exp(trainer_old_logp - rollout_logp).clamp(max=cap).detach()


def masked_is_weights(trainer_old_logp: torch.Tensor, rollout_logp: torch.Tensor, cap: float) -> torch.Tensor:
    """pi_trainer_old / pi_rollout per token where it is <= cap, else 0 (the token leaves the loss), no
    gradient: masked importance sampling (MIS; Liu, Yao et al. 2025, "When Speed Kills Stability", and
    verl's rollout_is mode "mask"), which drops the tokens TIS would keep at the cap. (B, T) -> (B, T)."""
    w = torch.exp(trainer_old_logp - rollout_logp)  # (B, T)
    return torch.where(w <= cap, w, torch.zeros_like(w)).detach()


def is_weights(trainer_old_logp: torch.Tensor, rollout_logp: torch.Tensor, *, tis_cap: float, mis_cap: float) -> torch.Tensor:
    """The configured importance correction of a rollout's tokens (TIS when tis_cap > 0, MIS when
    mis_cap > 0; the config allows one). (B, T), (B, T) -> (B, T)."""
    if mis_cap > 0:
        return masked_is_weights(trainer_old_logp, rollout_logp, mis_cap)
    return truncated_is_weights(trainer_old_logp, rollout_logp, tis_cap)


# ---- the loss -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClipConfig:
    eps_low: float = 0.2
    eps_high: float = 0.2
    dual_clip: float | None = None  # c > 1; caps the loss of negative-advantage tokens at -c * A


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip: ClipConfig,
) -> tuple[torch.Tensor, dict]:
    """Per-token clipped surrogate to minimise; zero where mask is 0.

    logp, old_logp, mask: (B, T); advantages: (B,). Returns loss (B, T) and token counts of the
    clipped regions (for clip fractions: low = ratio < 1 - eps_low with A < 0, high = ratio >
    1 + eps_high with A > 0, i.e. where the clip removed the gradient).
    """
    ratio = torch.exp(logp - old_logp)  # (B, T)
    adv = advantages[:, None].to(ratio.dtype)  # (B, 1)
    loss1 = -adv * ratio  # (B, T)
    loss2 = -adv * ratio.clamp(1 - clip.eps_low, 1 + clip.eps_high)  # (B, T)
    loss = torch.maximum(loss1, loss2)  # (B, T)
    if clip.dual_clip is not None:
        loss3 = -adv * clip.dual_clip  # (B, 1): bound for A < 0
        loss = torch.where(adv < 0, torch.minimum(loss, loss3), loss)  # (B, T)
    loss = loss * mask  # (B, T)
    with torch.no_grad():
        m = mask.bool()
        metrics = {
            "clip_low_tokens": ((ratio < 1 - clip.eps_low) & (adv < 0) & m).sum(),
            "clip_high_tokens": ((ratio > 1 + clip.eps_high) & (adv > 0) & m).sum(),
            "ratio_sum": (ratio * mask).sum(),
        }
    return loss, metrics


def rft_loss(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, dict]:
    """Per-token negative log-likelihood of the kept (correct) responses; zero where mask is 0.

    logp, old_logp, mask: (B, T). No advantage and no clip: every kept token is pushed up alike
    (RFT, Yuan et al. 2023). Metrics as policy_loss' (nothing is clipped; the ratio to the
    sampling policy is reported for drift)."""
    loss = -logp * mask  # (B, T)
    with torch.no_grad():
        ratio = torch.exp(logp - old_logp)  # (B, T)
        metrics = {"clip_low_tokens": 0.0, "clip_high_tokens": 0.0, "ratio_sum": (ratio * mask).sum()}
    return loss, metrics


@dataclass(frozen=True)
class Totals:
    """Whole-mini-batch normalisers, fixed before the micro-batches run."""

    tokens: int
    sequences: int
    norm_constant: float  # seq_sum_norm: the generation budget (max_new_tokens), as Dr. GRPO


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, mode: Aggregation, totals: Totals) -> torch.Tensor:
    """Reduce a (B, T) per-token loss of one micro-batch to its share of the mini-batch loss.

    token_mean:   sum_bt l / total_tokens                      (every token weighs the same)
    seq_mean:     sum_b (sum_t l / len_b) / total_sequences    (every sequence weighs the same)
    seq_sum_norm: sum_bt l / (total_sequences * norm_constant) (no length bias, Dr. GRPO)
    """
    masked = per_token * mask  # (B, T)
    if mode == "token_mean":
        return masked.sum() / max(totals.tokens, 1)
    if mode == "seq_mean":
        per_seq = masked.sum(-1) / mask.sum(-1).clamp(min=1)  # (B,)
        return per_seq.sum() / max(totals.sequences, 1)
    if mode == "seq_sum_norm":
        return masked.sum() / (max(totals.sequences, 1) * totals.norm_constant)
    raise ValueError(f"unknown loss aggregation {mode!r}; use token_mean, seq_mean or seq_sum_norm")


# ---- the objective: everything above, composed --------------------------------------------


@dataclass(frozen=True)
class Objective:
    clip: ClipConfig
    aggregation: Aggregation = "token_mean"
    tis_cap: float = 0.0  # 0 = no truncated importance sampling
    mis_cap: float = 0.0  # 0 = no masked importance sampling (at most one of the two caps is set)
    kl_beta: float = 0.0  # 0 = no KL term (the reference is then never needed)
    kl_estimator: KLKind = "k3"
    kind: Literal["grpo", "rft"] = "grpo"  # rft: rft_loss on the kept rows instead of the clipped surrogate (and no TIS)


def objective(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    obj: Objective,
    totals: Totals,
    ref_logp: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict]:
    """One micro-batch's share of the mini-batch loss, and its metric sums: 0-dim tensors on the
    loss's device (or 0.0), which the caller reads once per optimiser step, not once per micro-batch
    (a read is a host synchronisation that leaves a GPU waiting).

    logp: (B, T) the policy being trained; old_logp: (B, T) pi_old, the ratio's denominator (the
    trainer's own recomputation under TIS, else rollout_logp); rollout_logp: (B, T) the sampling
    engine's; advantages: (B,); mask: (B, T) response tokens; ref_logp: (B, T) the reference's,
    when kl_beta > 0. loss = aggregate(clipped surrogate * IS weight) + kl_beta * aggregate(KL), the IS
    weight TIS's or MIS's. Sums: tis (the weights), is_capped (tokens truncated or masked), is_max.
    """
    if obj.kind == "rft":  # cross-entropy on the rows kept (the correct ones); no advantage, no clip
        per_tok, m = rft_loss(logp, old_logp, mask)  # (B, T)
    else:
        per_tok, m = policy_loss(logp, old_logp, advantages, mask, obj.clip)  # (B, T)
    sums = {"clip_low": m["clip_low_tokens"], "clip_high": m["clip_high_tokens"], "ratio": m["ratio_sum"], "kl": 0.0}
    sums |= {"tis": 0.0, "is_capped": 0.0, "is_max": 0.0}
    cap = obj.tis_cap or obj.mis_cap
    if cap > 0 and obj.kind == "grpo":
        w = is_weights(old_logp, rollout_logp, tis_cap=obj.tis_cap, mis_cap=obj.mis_cap)  # (B, T)
        per_tok = per_tok * w  # (B, T)
        with torch.no_grad():
            raw = torch.exp(old_logp - rollout_logp) * mask  # (B, T): the weight before the cap
            sums |= {"tis": (w * mask).sum(), "is_capped": (raw > cap).sum(), "is_max": raw.max()}
    pg = aggregate(per_tok, mask, obj.aggregation, totals)  # ()
    loss = pg
    if ref_logp is not None and obj.kl_beta > 0:
        kl = kl_estimate(logp, ref_logp, obj.kl_estimator)  # (B, T)
        loss = loss + obj.kl_beta * aggregate(kl, mask, obj.aggregation, totals)  # ()
        sums["kl"] = (kl.detach() * mask).sum()
    with torch.no_grad():
        diff = (logp - rollout_logp).abs() * mask  # (B, T): trainer vs engine, meaningful before the first step
        sums |= {
            "loss": loss.detach(),
            "pg": pg.detach(),
            "approx_kl": ((rollout_logp - logp) * mask).sum(),
            "diff_sum": diff.sum(),
            "diff_max": diff.max(),
        }
    return loss, sums
