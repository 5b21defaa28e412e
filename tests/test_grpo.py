"""GRPO maths: hand-computed cases, plain-loop references on random inputs, gradient signs."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr.grpo import clipped_policy_loss, group_advantages, token_logprobs, token_mean


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
    loss, m = clipped_policy_loss(logp, old, adv, mask, clip_eps=0.2)
    # A>0: -min(r A, clip(r) A) -> r=1: -2; r=1.5: -min(3, 2.4) = -2.4; r=0.5: -min(1, 1.6) = -1
    # A<0: r=1: 1; r=1.5: -min(-1.5, -1.2) = 1.5; r=0.5: masked
    expected = torch.tensor([[-2.0, -2.4, -1.0], [1.0, 1.5, 0.0]])
    assert torch.allclose(loss, expected)
    assert m["clip_frac"] == pytest.approx(1 / 5)  # only (A>0, r=1.5) picks the clipped side
    assert token_mean(loss, mask, total_tokens=5).item() == pytest.approx((-2 - 2.4 - 1 + 1 + 1.5) / 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clipped_loss_matches_loop(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    logp, old = torch.randn(3, 4, generator=g) * 0.3, torch.randn(3, 4, generator=g) * 0.3
    adv, mask = torch.randn(3, generator=g), (torch.rand(3, 4, generator=g) > 0.3).float()
    loss, _ = clipped_policy_loss(logp, old, adv, mask, clip_eps=0.2)
    for b in range(3):
        for t in range(4):
            r = math.exp(logp[b, t] - old[b, t])
            ref = -min(r * adv[b].item(), min(max(r, 0.8), 1.2) * adv[b].item()) * mask[b, t].item()
            assert loss[b, t].item() == pytest.approx(ref, abs=1e-6)


def test_gradient_sign_follows_advantage() -> None:
    logp = torch.tensor([[-1.0, -2.0], [-1.0, -2.0]], requires_grad=True)
    old = logp.detach().clone()
    loss, _ = clipped_policy_loss(logp, old, torch.tensor([1.0, -1.0]), torch.ones(2, 2), clip_eps=0.2)
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
