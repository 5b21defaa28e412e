"""The update's memory options on CPU: gradient checkpointing gives the same loss and gradients,
bf16 autocast runs on CPU with a loss and gradients close to fp32."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.train.batch import TrainRow, collate
from rlvr.train.logprobs import response_logprobs
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import enable_gradient_checkpointing, make_optimizer

CPU = torch.device("cpu")


def _rows(vocab: int, n: int = 6) -> list[TrainRow]:
    g = torch.Generator().manual_seed(7)
    rows = []
    for k in range(n):
        P, R = 4 + k, 3 + (2 * k) % 5
        resp = torch.randint(5, vocab, (R,), generator=g).tolist()
        rows.append(TrainRow(torch.randint(5, vocab, (P,), generator=g).tolist(), resp, [-2.0] * R, float(k % 2) - 0.5))
    return rows


def _step(model, rows: list[TrainRow], **knobs) -> tuple[dict, torch.Tensor]:
    """One update with a vanishing lr: its metrics and the flat gradient it stepped with."""
    cfg = UpdateSection(minibatches=1, micro_batch_tokens=30, max_grad_norm=1e9, lr=1e-12, **knobs)
    opt, sched, _ = make_optimizer(model, cfg, None)
    (m,) = grpo_steps(model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=0, norm_constant=8.0)
    return m, torch.cat([p.grad.flatten() for p in model.parameters()])


def _saved_bytes(model, batch: dict[str, torch.Tensor]) -> int:
    """Bytes that autograd keeps for backward during one training forward."""
    total = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        response_logprobs(model, batch, 1.0)
    return total


@pytest.mark.parametrize("packing", [True, False])
def test_gradient_checkpointing_gives_the_same_loss_and_gradients(tiny_model: Path, packing: bool) -> None:
    plain, _ = load_policy(tiny_model, CPU)
    ckpt, _ = load_policy(tiny_model, CPU)
    enable_gradient_checkpointing(ckpt)
    rows = _rows(plain.config.vocab_size)
    batch = collate(rows, 0, CPU, packed=packing)
    assert _saved_bytes(ckpt, batch) < 0.7 * _saved_bytes(plain, batch)  # it is on: fewer activations kept
    (m0, g0), (m1, g1) = _step(plain, rows, packing=packing), _step(ckpt, rows, packing=packing)
    assert m0["loss"] == pytest.approx(m1["loss"], rel=1e-6, abs=1e-9) and m0["entropy"] == pytest.approx(m1["entropy"], rel=1e-6)
    assert g0.abs().max() > 0 and torch.allclose(g0, g1, rtol=1e-5, atol=1e-7)


def test_bf16_autocast_runs_on_cpu_close_to_fp32(tiny_model: Path) -> None:
    model, _ = load_policy(tiny_model, CPU)
    rows = _rows(model.config.vocab_size)
    batch = collate(rows, 0, CPU, packed=True)
    with torch.no_grad():
        lp32, _ = response_logprobs(model, batch, 1.0)  # (B, T-1)
        lp16, _ = response_logprobs(model, batch, 1.0, bf16=True)  # (B, T-1)
    assert lp16.dtype == torch.float32  # the head's log-softmax runs in fp32 either way
    assert not torch.equal(lp16, lp32)  # autocast did take effect
    assert torch.allclose(lp16, lp32, atol=0.1)  # ... and bf16's 8-bit mantissa stays close
    (m32, g32), (m16, g16) = _step(model, rows), _step(model, rows, bf16=True)
    assert all(torch.isfinite(torch.tensor([m16["loss"], m16["grad_norm"]])))
    assert m16["loss"] == pytest.approx(m32["loss"], rel=0.05, abs=1e-3)
    assert torch.nn.functional.cosine_similarity(g16, g32, dim=0) > 0.99
