"""The update's step loop reads nothing back from the device per micro-batch: every host read that
rlvr's own code makes (`.item()`, `.tolist()`, `float(t)`, `int(t)`, `bool(t)`, `.cpu()`, `.numpy()`) is
counted while a step runs, and a step of many micro-batches must make exactly as many as a step of one.
On a GPU each such read waits for every kernel queued before it; per micro-batch, they leave the card
idle between small kernels. (The reads inside transformers' forward are not rlvr's and are not counted.)
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

import rlvr
from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.train.batch import TrainRow
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import make_optimizer

READS = ("item", "tolist", "__float__", "__int__", "__bool__", "cpu", "numpy")
OURS = str(Path(rlvr.__file__).resolve().parent)  # rlvr/ (flows/, tasks/ and data/ install under it too)


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Patch the tensor's host-read methods to count the calls made from rlvr's own files."""
    seen: Counter = Counter()
    for name in READS:
        real = getattr(torch.Tensor, name)

        def counted(self, *args, _real=real, _name=name, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if str(Path(caller).resolve()).startswith(OURS):
                seen[f"{Path(caller).name}:{sys._getframe(1).f_lineno} {_name}"] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return seen


def _rows(vocab: int, n: int = 8) -> list[TrainRow]:
    g = torch.Generator().manual_seed(5)
    return [
        TrainRow(
            torch.randint(5, vocab, (4,), generator=g).tolist(),
            torch.randint(5, vocab, (3,), generator=g).tolist(),
            [-1.0, -2.0, -0.5],
            1.0 if k % 2 else -1.0,
        )
        for k in range(n)
    ]


@pytest.mark.parametrize("tis_cap", [0.0, 2.0], ids=["grpo", "grpo-tis"])
def test_a_step_reads_the_device_as_often_with_many_micro_batches_as_with_one(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch, tis_cap: float
) -> None:
    model, _ = load_policy(tiny_model, torch.device("cpu"))
    rows = _rows(model.config.vocab_size)
    reads, metrics = [], []
    for tokens in (4096, 14):  # one micro-batch of 8 rows; four of two rows each (7 tokens a row)
        cfg = UpdateSection(minibatches=1, epochs=1, micro_batch_tokens=tokens, lr=1e-12, tis_cap=tis_cap)
        opt, sched, _ = make_optimizer(model, cfg, None)
        with monkeypatch.context() as m:
            seen = _count_reads(m)
            (step,) = grpo_steps(model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=0, norm_constant=8.0)
        reads.append(seen)
        metrics.append(step)
    assert metrics[0]["micro_batches"] == 1 and metrics[1]["micro_batches"] == 4
    # TIS's no-grad logprob pass (rows_logprobs) reads each batch's logprobs once, never once a row
    per_batch = [sum(n for k, n in r.items() if k.startswith("logprobs.py")) for r in reads]
    assert per_batch == ([1, 4] if tis_cap else [0, 0]), reads
    step_reads = [sum(n for k, n in r.items() if not k.startswith("logprobs.py")) for r in reads]
    assert step_reads[1] == step_reads[0] <= 3, (reads[0], reads[1])  # none per micro-batch
    assert metrics[1]["loss"] == pytest.approx(metrics[0]["loss"], rel=1e-4)  # the same step, split differently
    assert metrics[1]["entropy"] == pytest.approx(metrics[0]["entropy"], rel=1e-4)
