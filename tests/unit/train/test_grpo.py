"""GRPO maths: hand-computed cases, plain-loop references on random inputs, gradient signs."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr.train.grpo import ClipConfig, Totals, aggregate, group_advantages, policy_loss, token_logprobs


def token_mean(loss: torch.Tensor, mask: torch.Tensor, total_tokens: int) -> torch.Tensor:
    return aggregate(loss, mask, "token_mean", Totals(tokens=total_tokens, sequences=1, norm_constant=1.0))


def test_group_advantages_hand_case() -> None:
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 2.0, 2.0, 5.0])
    g = torch.tensor([0, 0, 0, 0, 1, 1, 2])
    adv, m = group_advantages(r, g, eps=0.0 + 1e-12)
    std0 = math.sqrt((0.75**2 + 3 * 0.25**2) / 3)  # sample std of [1,0,0,0]
    assert adv[:4].tolist() == pytest.approx([0.75 / std0, -0.25 / std0, -0.25 / std0, -0.25 / std0])
    assert adv[4:].tolist() == [0.0, 0.0, 0.0]  # equal rewards and a singleton: no signal
    assert m == {"groups": 3, "groups_zero_std": 2}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_advantages_match_loop(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    group = torch.randint(0, 6, (40,), generator=g)
    group[:6] = torch.arange(6)  # every group present
    r = torch.randint(0, 3, (40,), generator=g).double()
    adv, _ = group_advantages(r, group, eps=1e-6)
    for n in range(40):
        members = [r[k].item() for k in range(40) if group[k] == group[n]]
        mean = sum(members) / len(members)
        std = math.sqrt(sum((x - mean) ** 2 for x in members) / (len(members) - 1)) if len(members) > 1 else 0.0
        assert adv[n].item() == pytest.approx((r[n].item() - mean) / (std + 1e-6))


def test_token_logprobs_match_loop() -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 5, generator=g)
    targets = torch.randint(0, 5, (2, 3), generator=g)
    out = token_logprobs(logits, targets, temperature=0.7)
    for b in range(2):
        for t in range(3):
            z = logits[b, t] / 0.7
            expected = z[targets[b, t]] - torch.logsumexp(z, 0)
            assert out[b, t].item() == pytest.approx(expected.item(), abs=1e-6)


def test_clipped_loss_hand_case() -> None:
    # ratios e^0 = 1, e^{ln 1.5} = 1.5, e^{ln 0.5} = 0.5; eps = 0.2
    old = torch.zeros(2, 3)
    logp = torch.log(torch.tensor([[1.0, 1.5, 0.5], [1.0, 1.5, 0.5]]))
    adv = torch.tensor([2.0, -1.0])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    loss, m = policy_loss(logp, old, adv, mask, ClipConfig(0.2, 0.2))
    # A>0: -min(r A, clip(r) A) -> r=1: -2; r=1.5: -min(3, 2.4) = -2.4; r=0.5: -min(1, 1.6) = -1
    # A<0: r=1: 1; r=1.5: -min(-1.5, -1.2) = 1.5; r=0.5: masked
    expected = torch.tensor([[-2.0, -2.4, -1.0], [1.0, 1.5, 0.0]])
    assert torch.allclose(loss, expected)
    assert m["clip_high_tokens"] == 1  # only (A>0, r=1.5) is clipped above
    assert m["clip_low_tokens"] == 0  # (A<0, r=0.5) is masked
    assert token_mean(loss, mask, total_tokens=5).item() == pytest.approx((-2 - 2.4 - 1 + 1 + 1.5) / 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clipped_loss_matches_loop(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    logp, old = torch.randn(3, 4, generator=g) * 0.3, torch.randn(3, 4, generator=g) * 0.3
    adv, mask = torch.randn(3, generator=g), (torch.rand(3, 4, generator=g) > 0.3).float()
    loss, _ = policy_loss(logp, old, adv, mask, ClipConfig(0.2, 0.2))
    for b in range(3):
        for t in range(4):
            r = math.exp(logp[b, t] - old[b, t])
            ref = -min(r * adv[b].item(), min(max(r, 0.8), 1.2) * adv[b].item()) * mask[b, t].item()
            assert loss[b, t].item() == pytest.approx(ref, abs=1e-6)


def test_gradient_sign_follows_advantage() -> None:
    logp = torch.tensor([[-1.0, -2.0], [-1.0, -2.0]], requires_grad=True)
    old = logp.detach().clone()
    loss, _ = policy_loss(logp, old, torch.tensor([1.0, -1.0]), torch.ones(2, 2), ClipConfig())
    token_mean(loss, torch.ones(2, 2), 4).backward()
    assert (logp.grad[0] < 0).all()  # descending the loss raises logp where A > 0
    assert (logp.grad[1] > 0).all()  # and lowers it where A < 0


def test_token_mean_accumulates_like_one_batch() -> None:
    g = torch.Generator().manual_seed(0)
    loss, mask = torch.randn(6, 5, generator=g), (torch.rand(6, 5, generator=g) > 0.4).float()
    total = int(mask.sum())
    whole = token_mean(loss, mask, total)
    parts = token_mean(loss[:2], mask[:2], total) + token_mean(loss[2:], mask[2:], total)
    assert whole.item() == pytest.approx(parts.item())
    assert whole.item() == pytest.approx(float((loss * mask).sum() / mask.sum()))


# ---- variants (issue: GRPO update done right) ---------------------------------------------

from rlvr.train.grpo import kl_estimate, token_entropy, truncated_is_weights  # noqa: E402


def test_dr_grpo_and_rloo_hand_case() -> None:
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 3.0])
    g = torch.tensor([0, 0, 0, 0, 1])
    dr, _ = group_advantages(r, g, estimator="dr_grpo")
    assert dr.tolist() == pytest.approx([0.75, -0.25, -0.25, -0.25, 0.0])
    rloo, _ = group_advantages(r, g, estimator="rloo")
    # r_i - mean of the other three: 1 - 0 = 1; 0 - 1/3
    assert rloo.tolist() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3, 0.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rloo_matches_loop(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    group = torch.randint(0, 5, (30,), generator=g)
    r = torch.rand(30, generator=g, dtype=torch.float64)
    adv, _ = group_advantages(r, group, estimator="rloo")
    for n in range(30):
        others = [r[k].item() for k in range(30) if group[k] == group[n] and k != n]
        expected = r[n].item() - sum(others) / len(others) if others else 0.0
        assert adv[n].item() == pytest.approx(expected)


def test_unknown_estimator_is_named() -> None:
    with pytest.raises(ValueError, match="grpo, dr_grpo or rloo"):
        group_advantages(torch.ones(2), torch.zeros(2, dtype=torch.long), estimator="ppo")  # type: ignore[arg-type]


def test_clip_higher_and_dual_clip_hand_case() -> None:
    old = torch.zeros(2, 3)
    logp = torch.log(torch.tensor([[1.25, 1.35, 0.7], [5.0, 0.7, 1.0]]))
    adv = torch.tensor([1.0, -1.0])
    mask = torch.ones(2, 3)
    loss, m = policy_loss(logp, old, adv, mask, ClipConfig(eps_low=0.2, eps_high=0.28))
    # A>0, upper clip 1.28: r=1.25 -> -1.25 ; r=1.35 -> -1.28 ; r=0.7 -> -min(0.7, 0.8) = -0.7
    # A<0, lower clip 0.8:  r=5 -> max(5, 0.8*... ) = 5 ; r=0.7 -> max(0.7, 0.8) = 0.8 ; r=1 -> 1
    assert loss.tolist() == [pytest.approx([-1.25, -1.28, -0.7]), pytest.approx([5.0, 0.8, 1.0])]
    assert (m["clip_high_tokens"], m["clip_low_tokens"]) == (1, 1)
    dual, _ = policy_loss(logp, old, adv, mask, ClipConfig(eps_low=0.2, eps_high=0.28, dual_clip=3.0))
    assert dual[1].tolist() == pytest.approx([3.0, 0.8, 1.0])  # the r=5 loss is capped at -c * A = 3
    assert torch.equal(dual[0], loss[0])  # positive advantages are untouched


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dual_clip_matches_loop(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    logp, old = torch.randn(4, 5, generator=g), torch.randn(4, 5, generator=g)
    adv, mask = torch.randn(4, generator=g), torch.ones(4, 5)
    loss, _ = policy_loss(logp, old, adv, mask, ClipConfig(0.2, 0.3, 3.0))
    for b in range(4):
        for t in range(5):
            r, a = math.exp(logp[b, t] - old[b, t]), adv[b].item()
            ref = max(-a * r, -a * min(max(r, 0.8), 1.3))
            if a < 0:
                ref = min(ref, -a * 3.0)
            assert loss[b, t].item() == pytest.approx(ref, rel=1e-5, abs=1e-6)


def test_aggregation_normalisers() -> None:
    loss = torch.tensor([[1.0, 1.0, 1.0, 0.0], [4.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    t = Totals(tokens=4, sequences=2, norm_constant=8.0)
    assert aggregate(loss, mask, "token_mean", t).item() == pytest.approx(7 / 4)  # every token alike
    assert aggregate(loss, mask, "seq_mean", t).item() == pytest.approx((3 / 3 + 4 / 1) / 2)  # every sequence alike
    assert aggregate(loss, mask, "seq_sum_norm", t).item() == pytest.approx(7 / (2 * 8))  # Dr. GRPO constant


@pytest.mark.parametrize("mode", ["token_mean", "seq_mean", "seq_sum_norm"])
def test_every_aggregation_accumulates_like_one_batch(mode: str) -> None:
    g = torch.Generator().manual_seed(1)
    loss, mask = torch.randn(6, 5, generator=g), (torch.rand(6, 5, generator=g) > 0.3).float()
    mask[:, 0] = 1
    t = Totals(tokens=int(mask.sum()), sequences=6, norm_constant=5.0)
    whole = aggregate(loss, mask, mode, t)  # type: ignore[arg-type]
    parts = aggregate(loss[:4], mask[:4], mode, t) + aggregate(loss[4:], mask[4:], mode, t)  # type: ignore[arg-type]
    assert whole.item() == pytest.approx(parts.item())


def test_kl_estimators_hand_case() -> None:
    logp, ref = torch.tensor([[math.log(0.5)]]), torch.tensor([[math.log(0.25)]])
    log_r = math.log(0.5)  # ref / pi
    assert kl_estimate(logp, ref, "k1").item() == pytest.approx(-log_r)
    assert kl_estimate(logp, ref, "k2").item() == pytest.approx(0.5 * log_r**2)
    assert kl_estimate(logp, ref, "k3").item() == pytest.approx(0.5 - 1 - log_r)
    assert kl_estimate(logp, logp, "k3").item() == 0.0


def test_k3_is_unbiased_for_kl() -> None:
    g = torch.Generator().manual_seed(0)
    p, q = torch.softmax(torch.randn(6, generator=g), 0), torch.softmax(torch.randn(6, generator=g), 0)
    exact = float((p * (p.log() - q.log())).sum())
    x = torch.multinomial(p, 200_000, replacement=True, generator=g)
    est = kl_estimate(p.log()[x][None], q.log()[x][None], "k3").mean().item()
    assert est == pytest.approx(exact, rel=0.05)


def test_entropy_and_tis_weights() -> None:
    uniform = torch.zeros(1, 1, 4)
    assert token_entropy(uniform).item() == pytest.approx(math.log(4))
    w = truncated_is_weights(torch.tensor([[0.0, -1.0]]), torch.tensor([[-1.0, 0.0]]), cap=2.0)
    assert w[0].tolist() == pytest.approx([2.0, math.exp(-1)])  # e^1 capped at 2


def test_rft_loss_is_masked_negative_log_likelihood() -> None:
    """RFT: -log p of every kept token, nothing else; its gradient raises every kept token's logprob."""
    from rlvr.train.grpo import rft_loss

    logp = torch.tensor([[-0.5, -2.0, -1.0], [-3.0, -0.1, -0.2]], requires_grad=True)  # (2, 3)
    mask = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    loss, m = rft_loss(logp, logp.detach(), mask)
    assert torch.allclose(loss, torch.tensor([[0.5, 2.0, 0.0], [0.0, 0.1, 0.2]]))
    assert m == {"clip_low_tokens": 0.0, "clip_high_tokens": 0.0, "ratio_sum": 4.0}  # ratio 1 on each of 4 kept tokens
    loss.sum().backward()
    assert torch.equal(logp.grad, -mask)  # descent raises exactly the kept tokens


def test_objective_rft_is_token_mean_nll_without_tis() -> None:
    """objective with kind = 'rft': the aggregated NLL; advantages and the TIS cap play no part."""
    from rlvr.train.grpo import ClipConfig, Objective, Totals, objective

    logp = torch.tensor([[-1.0, -3.0]])
    obj = Objective(ClipConfig(0.2, 0.2), "token_mean", tis_cap=2.0, kind="rft")
    loss, sums = objective(logp, logp, logp - 5.0, torch.tensor([-7.0]), torch.ones(1, 2), obj, Totals(2, 1, 4.0))
    assert loss.item() == pytest.approx(2.0) and sums["tis"] == 0.0 and sums["clip_low"] == 0.0


def test_objective_composes_clip_tis_kl_and_aggregation_by_hand() -> None:
    """Two tokens, A = +1, the policy equal to pi_old (ratio 1): the surrogate is -1 a token; the
    engine sampled with half pi_old's probability, so the TIS weight is min(2, 1.5) = 1.5; the
    reference has half the policy's probability, so k3 = 0.5 - 1 + ln 2 a token."""
    import math

    from rlvr.train.grpo import ClipConfig, Objective, Totals, objective

    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)  # (1, 2)
    old = logp.detach().clone()
    rollout = old - math.log(2)
    ref = logp.detach() - math.log(2)
    mask, adv = torch.ones(1, 2), torch.tensor([1.0])
    obj = Objective(ClipConfig(0.2, 0.2), "token_mean", tis_cap=1.5, kl_beta=0.5, kl_estimator="k3")
    loss, sums = objective(logp, old, rollout, adv, mask, obj, Totals(tokens=2, sequences=1, norm_constant=4.0), ref)
    k3 = 0.5 - 1 + math.log(2)
    assert loss.item() == pytest.approx(-1.5 + 0.5 * k3)
    assert sums["pg"] == pytest.approx(-1.5) and sums["kl"] == pytest.approx(2 * k3) and sums["tis"] == pytest.approx(3.0)
    assert sums["diff_max"] == pytest.approx(math.log(2)) and sums["ratio"] == pytest.approx(2.0)
    loss.backward()  # d/dlogp of (-1.5 * ratio + 0.5 * k3) / 2 tokens, per token: (-1.5 + 0.5 * (1 - 0.5)) / 2
    assert logp.grad[0].tolist() == pytest.approx([(-1.5 + 0.25) / 2] * 2)
    # without TIS and KL it is the plain clipped surrogate, aggregated
    loss2, sums2 = objective(logp, old, old, adv, mask, Objective(ClipConfig(0.2, 0.2)), Totals(2, 1, 4.0))
    assert loss2.item() == pytest.approx(-1.0) and sums2["kl"] == 0.0 and sums2["tis"] == 0.0


def test_masked_is_weights_drop_the_tokens_over_the_cap() -> None:
    """MIS: a weight over the cap is 0 (the token leaves the loss), one under it is kept as is; TIS keeps
    the first at the cap instead. Weights here: e^1 = 2.72 > 2, e^-1 = 0.37, e^0.5 = 1.65."""
    from rlvr.train.grpo import is_weights, masked_is_weights

    trainer = torch.tensor([[0.0, -1.0, -0.5]])
    rollout = torch.tensor([[-1.0, 0.0, -1.0]])
    assert masked_is_weights(trainer, rollout, cap=2.0)[0].tolist() == pytest.approx([0.0, math.exp(-1), math.exp(0.5)])
    assert is_weights(trainer, rollout, tis_cap=2.0, mis_cap=0.0)[0].tolist() == pytest.approx([2.0, math.exp(-1), math.exp(0.5)])
    assert is_weights(trainer, rollout, tis_cap=0.0, mis_cap=2.0)[0, 0] == 0.0


def test_objective_with_mis_counts_the_masked_tokens_and_the_largest_weight() -> None:
    """Two tokens, A = +1, ratio 1 to pi_old; the sampler gave token 0 a third of pi_old's probability
    (weight 3 > cap 2: masked) and token 1 half (weight 2 <= 2: kept). Loss = -(0 + 2) / 2 tokens."""
    from rlvr.train.grpo import ClipConfig, Objective, Totals, objective

    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    old = logp.detach().clone()
    rollout = old - torch.tensor([[math.log(3), math.log(2)]])
    obj = Objective(ClipConfig(0.2, 0.2), "token_mean", mis_cap=2.0)
    loss, sums = objective(logp, old, rollout, torch.tensor([1.0]), torch.ones(1, 2), obj, Totals(2, 1, 4.0))
    assert loss.item() == pytest.approx(-1.0)
    assert sums["tis"] == pytest.approx(2.0) and sums["is_capped"] == 1.0 and sums["is_max"] == pytest.approx(3.0)
    loss.backward()
    assert logp.grad[0].tolist() == pytest.approx([0.0, -1.0])  # the masked token gets no gradient
    tis = Objective(ClipConfig(0.2, 0.2), "token_mean", tis_cap=2.0)
    _, sums_t = objective(logp, old, rollout, torch.tensor([1.0]), torch.ones(1, 2), tis, Totals(2, 1, 4.0))
    assert sums_t["tis"] == pytest.approx(4.0) and sums_t["is_capped"] == 1.0  # truncated at 2, not dropped
