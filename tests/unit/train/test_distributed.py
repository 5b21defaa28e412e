"""Dist.zero_grads and Dist.sum_grads on two real gloo ranks (torch.multiprocessing, a file rendezvous):
the gradients are summed over ranks, laid out in one flat buffer that the next step zeroes in place, and
frozen parameters get none."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as tdist
import torch.multiprocessing as mp

from rlvr.train.distributed import Dist


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    net[0].bias.requires_grad_(False)  # frozen, as LoRA's base weights are
    return net


def _grads(net: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    net.zero_grad(set_to_none=True)
    net(x).square().sum().backward()
    return [p.grad.clone() for p in net.parameters() if p.requires_grad]


def _rank(rank: int, init: str, out: dict) -> None:
    tdist.init_process_group("gloo", init_method=init, rank=rank, world_size=2)
    try:
        dist, net = Dist.current(), _model()
        inputs = [torch.full((2, 3), float(k + 1)) for k in range(2)]  # rank k's micro-batch: inputs[k]
        seen = []
        for _step in range(2):
            dist.zero_grads(net, torch.optim.SGD([p for p in net.parameters() if p.requires_grad]))
            net(inputs[rank]).square().sum().backward()
            dist.sum_grads(net)
            seen.append([p.grad.data_ptr() if p.grad is not None else None for p in net.parameters()])
        if rank == 0:
            out["grads"] = [p.grad.clone() if p.grad is not None else None for p in net.parameters()]
            out["ptrs"] = seen
    finally:
        tdist.destroy_process_group()


def test_two_ranks_sum_into_one_flat_buffer(tmp_path: Path) -> None:
    out = mp.Manager().dict()
    mp.spawn(_rank, args=(f"file://{tmp_path / 'rendezvous'}", out), nprocs=2, join=True)
    net = _model()
    expected = [a + b for a, b in zip(_grads(net, torch.full((2, 3), 1.0)), _grads(net, torch.full((2, 3), 2.0)), strict=True)]
    got = out["grads"]
    assert got[1] is None  # the frozen bias: no gradient, nothing sent
    for g, e in zip([g for g in got if g is not None], expected, strict=True):
        torch.testing.assert_close(g, e)  # each step zeroes first: no carry-over from step 1
    first, second = out["ptrs"]
    assert first == second  # the second step reuses the buffer, in place
    ptrs = [p for p in first if p is not None]
    sizes = [p.numel() * p.element_size() for p in net.parameters() if p.requires_grad]
    assert [b - a for a, b in zip(ptrs, ptrs[1:])] == sizes[:-1]  # adjacent views of one buffer, in order


def test_one_rank_frees_gradients() -> None:
    net = _model()
    net(torch.ones(1, 3)).sum().backward()
    Dist().zero_grads(net, torch.optim.SGD([p for p in net.parameters() if p.requires_grad]))
    assert all(p.grad is None for p in net.parameters())
