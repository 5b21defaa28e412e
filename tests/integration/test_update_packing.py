"""Padding-free packed micro-batches (update.packing): same log-probs, gradients and steps as the
padded rows, within the token budget, with no padding token at all."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.train.batch import TrainRow, collate, micro_batches
from rlvr.train.logprobs import response_logprobs
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import make_optimizer

CPU = torch.device("cpu")


def _rows(vocab: int, n: int = 7, seed: int = 0) -> list[TrainRow]:
    """n rows of random prompts and responses of different lengths (some of length 1)."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for k in range(n):
        P, R = 1 + (5 * k) % 9, 1 + (3 * k) % 7
        prompt = torch.randint(5, vocab, (P,), generator=g).tolist()
        resp = torch.randint(5, vocab, (R,), generator=g).tolist()
        rows.append(TrainRow(prompt, resp, (-torch.rand(R, generator=g)).tolist(), float(k % 3 - 1)))
    return rows


def test_packed_micro_batches_fill_the_budget_without_padding() -> None:
    rows = [TrainRow([1] * p, [2] * 3, [0.0] * 3, 1.0) for p in (2, 9, 4, 5, 1, 7, 30)]
    mbs = micro_batches(rows, token_budget=20, packed=True)
    assert sorted(r.length for mb in mbs for r in mb) == sorted(r.length for r in rows)
    for mb in mbs:
        assert len(mb) == 1 or sum(r.length for r in mb) <= 20
    assert [[r.length for r in mb] for mb in mbs] == [[4, 5, 7], [8, 10], [12], [33]]
    assert len(micro_batches(rows, token_budget=20)) == 5  # padded: [4, 5], [7, 8], [10], [12], [33]
    batch = collate(mbs[0], pad_id=0, device=CPU, packed=True)
    assert batch["ids"].shape == (1, 16) and "attn" not in batch  # one row, no padding token
    assert batch["pos"].tolist() == [[0, 1, 2, 3, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6]]
    assert int(batch["src"].sum()) == int(batch["mask"].sum()) == 9  # 3 response tokens each


def test_collate_packed_marks_the_positions_that_predict_responses() -> None:
    rows = [TrainRow([7, 8], [9], [-0.5], 1.0), TrainRow([3], [4, 5], [-0.25, -0.75], -1.0)]
    b = collate(rows, pad_id=0, device=CPU, packed=True)
    assert b["ids"].tolist() == [[7, 8, 9, 3, 4, 5]]
    # position t predicts token t+1: 8->9, 3->4, 4->5; 9->3 crosses sequences and is not trained
    assert b["src"].tolist() == [[False, True, False, True, True]]
    assert b["mask"].tolist() == [[0, 1], [1, 1]] and b["old"].tolist() == [[0.0, -0.5], [-0.25, -0.75]]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_packed_logprobs_and_gradients_equal_padded(tiny_model: Path, attn: str) -> None:
    model, _ = load_policy(tiny_model, CPU)
    model.set_attn_implementation(attn)
    rows = _rows(model.config.vocab_size)
    out = {}
    for packed in (False, True):
        batch = collate(rows, pad_id=0, device=CPU, packed=packed)
        model.zero_grad()
        lp, ent = response_logprobs(model, batch, temperature=0.7)  # (B, T-1)
        (lp * torch.linspace(0.5, 2.0, lp.shape[1])).sum().backward()  # position-dependent weights
        out[packed] = lp.detach(), ent, [p.grad.clone() for p in model.parameters()]
    (lp0, ent0, g0), (lp1, ent1, g1) = out[False], out[True]
    assert lp0.abs().sum() > 0
    assert torch.allclose(lp0, lp1, atol=1e-5) and torch.allclose(ent0, ent1, atol=1e-4)
    # float32 sums in another order: close relative to the largest entry. 1e-4, not 1e-5: a tiny model built on
    # another CPU gave 1.8e-5 with sdpa; sequences that see each other (the guard below) differ by orders more
    for a, b in zip(g0, g1, strict=True):
        assert a.abs().max() > 0 and (a - b).abs().max() <= 1e-4 * a.abs().max()


def test_packing_ignored_would_break_equality(tiny_model: Path) -> None:
    """Guard for the test above: without the restarting position ids the sequences see each other."""
    model, _ = load_policy(tiny_model, CPU)
    rows = _rows(model.config.vocab_size)
    with torch.no_grad():
        lp0, _ = response_logprobs(model, collate(rows, 0, CPU), 1.0)
        batch = collate(rows, 0, CPU, packed=True)
        batch["pos"] = torch.arange(batch["ids"].shape[1])[None]  # one long sequence
        lp1, _ = response_logprobs(model, batch, 1.0)
    assert not torch.allclose(lp0, lp1, atol=1e-3)


@pytest.mark.parametrize("aggregation", ["token_mean", "seq_mean"])
def test_packed_and_padded_updates_take_the_same_step(tiny_model: Path, aggregation: str) -> None:
    rows = _rows(100, n=9, seed=3)
    grads, metrics = [], []
    for packing in (False, True):
        model, _ = load_policy(tiny_model, CPU)
        cfg = UpdateSection(
            packing=packing, micro_batch_tokens=40, minibatches=1, max_grad_norm=1e9, lr=1e-12, aggregation=aggregation
        )
        opt, sched, _ = make_optimizer(model, cfg, None)
        (m,) = grpo_steps(model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=0, norm_constant=16.0)
        metrics.append(m)
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    assert metrics[1]["micro_batches"] < metrics[0]["micro_batches"]
    assert metrics[0]["loss"] == pytest.approx(metrics[1]["loss"], rel=1e-5)
    assert metrics[0]["entropy"] == pytest.approx(metrics[1]["entropy"], rel=1e-5)
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)
