"""The step loop's pieces: a step's metrics from its sums, the one no-grad logprob pass over rows and
its two users (imported responses' missing logprobs, TIS's trainer-side pi_old), progress counting."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

import rlvr.train.loop as loop
from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.train.batch import TrainRow, collate
from rlvr.train.grpo import Totals
from rlvr.train.logprobs import policy_token_logprobs
from rlvr.train.loop import SUMS, fill_missing_logprobs, grpo_steps, step_metrics, with_trainer_old_logprobs
from rlvr.train.optim import make_optimizer

CPU = torch.device("cpu")


def _rows(vocab: int, n: int = 5) -> list[TrainRow]:
    """n rows of different lengths, listed longest first (so that sorting them shows)."""
    g = torch.Generator().manual_seed(3)
    rows = []
    for k in range(n):
        P, R = 2 + (4 * k) % 5, 1 + (3 * k) % 4
        rows.append(
            TrainRow(
                torch.randint(5, vocab, (P,), generator=g).tolist(),
                torch.randint(5, vocab, (R,), generator=g).tolist(),
                [-1.0] * R,
                1.0,
            )
        )
    return sorted(rows, key=lambda r: -r.length)


def _oracle(model, row: TrainRow) -> list[float]:
    """The row's response logprobs from the full logits, alone in its batch."""
    batch = collate([replace(row, old_logprobs=[0.0] * len(row.response_ids), trainer_old_logprobs=None)], 0, CPU)
    with torch.no_grad():
        lp = policy_token_logprobs(model, batch)  # (1, T-1)
    P = len(row.prompt_ids)
    return lp[0, P - 1 : row.length - 1].tolist()


def test_step_metrics_are_per_token_means_and_none_where_off() -> None:
    sums = dict(zip(SUMS, [2.0, 1.5, 0.8, 1.0, 3.0, 7.6, 0.4, 12.0, 6.0, 2.0, 0.2], strict=True))
    totals = Totals(tokens=8, sequences=2, norm_constant=16.0)
    maxes = {"diff_max": 0.05, "is_max": 3.5}
    m = step_metrics(sums, maxes, totals, kl=True, tis=True, first=True)
    assert m == {
        "loss": 2.0,
        "policy_loss": 1.5,
        "kl": 0.1,
        "clip_frac_low": 0.125,
        "clip_frac_high": 0.375,
        "ratio_mean": 0.95,
        "approx_kl": 0.05,
        "entropy": 1.5,
        "tokens": 8,
        "sequences": 2,
        "logprob_diff_mean": 0.025,
        "logprob_diff_max": 0.05,
        "tis_weight_mean": 0.75,
        "is_weight_max": 3.5,
        "is_capped_frac": 0.25,
    }
    off = step_metrics(sums, maxes, totals, kl=False, tis=False, first=False)
    keys = ("kl", "tis_weight_mean", "is_weight_max", "is_capped_frac", "logprob_diff_mean", "logprob_diff_max")
    assert [off[k] for k in keys] == [None] * 6
    empty = step_metrics(
        dict.fromkeys(SUMS, 0.0),
        {"diff_max": 0.0, "is_max": 0.0},
        Totals(tokens=0, sequences=0, norm_constant=1.0),
        kl=True,
        tis=True,
        first=True,
    )
    assert empty["ratio_mean"] == 0.0 and empty["kl"] == 0.0  # no tokens: divided by 1, not by 0


def test_fill_missing_logprobs_fills_only_the_missing_rows(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "FILL_ROWS", 2)  # several passes
    model, _ = load_policy(tiny_model, CPU)
    rows = _rows(model.config.vocab_size)
    rows = [r if k % 4 == 0 else TrainRow(r.prompt_ids, r.response_ids, [], r.advantage) for k, r in enumerate(rows)]
    out, n = fill_missing_logprobs(model, rows, temperature=1.0, pad_id=0, cfg=UpdateSection(), device=CPU)
    assert n == 3 and [len(r.old_logprobs) for r in out] == [len(r.response_ids) for r in rows]
    for k, (r, o) in enumerate(zip(rows, out, strict=True)):
        if k % 4 == 0:
            assert o is r  # had its logprobs: untouched
        else:
            assert o.prompt_ids == r.prompt_ids and o.old_logprobs == pytest.approx(_oracle(model, r), abs=1e-5)
    assert fill_missing_logprobs(model, out, temperature=1.0, pad_id=0, cfg=UpdateSection(), device=CPU) == (out, 0)


@pytest.mark.parametrize("packed", [False, True])
def test_trainer_old_logprobs_are_the_policys_in_micro_batch_order(tiny_model: Path, packed: bool) -> None:
    model, _ = load_policy(tiny_model, CPU)
    rows = _rows(model.config.vocab_size)
    out = with_trainer_old_logprobs(
        model, rows, temperature=1.0, pad_id=0, cfg=UpdateSection(micro_batch_tokens=20, packing=packed), device=CPU
    )
    assert [r.length for r in out] == sorted(r.length for r in rows)  # length-sorted, as the micro-batches are
    for r in out:
        assert r.old_logprobs == [-1.0] * len(r.response_ids)  # the engine's stay
        assert r.trainer_old_logprobs == pytest.approx(_oracle(model, r), abs=1e-5)


def test_progress_counts_sequences_over_all_epochs(tiny_model: Path) -> None:
    model, _ = load_policy(tiny_model, CPU)
    rows = _rows(model.config.vocab_size)
    cfg = UpdateSection(minibatches=2, epochs=2, micro_batch_tokens=20, lr=1e-12)
    opt, sched, _ = make_optimizer(model, cfg, None)
    seen: list[tuple[int, int]] = []
    ms = grpo_steps(
        model,
        opt,
        sched,
        rows,
        cfg=cfg,
        temperature=1.0,
        pad_id=0,
        norm_constant=8.0,
        on_progress=lambda d, t: seen.append((d, t)),
    )
    assert [(m["epoch"], m["step"]) for m in ms] == [(0, 0), (0, 1), (1, 2), (1, 3)]
    assert seen[0] == (0, 10) and seen[-1] == (10, 10) and {t for _, t in seen} == {10}
    assert len(seen) == 1 + sum(m["micro_batches"] for m in ms)  # once at the start, then once a micro-batch
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
