"""The verify SQL on hand-computed rows: extraction, normalisation, numeric vs exact, rewards,
reasons, and group advantages (checked against rlvr.grpo.group_advantages as a reference)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from rlvr.config import VerifySection
from rlvr.grpo import group_advantages
from rlvr.schema import PROBLEMS, ROLLOUTS
from rlvr.store import write_table
from rlvr.verify import VerifyError, score

PROBLEMS_ROWS = [("n", "19"), ("neg", "-4"), ("big", "1200"), ("frac", "0.5"), ("word", "Paris"), ("same", "7")]

# (prompt_id, response, extracted_answer, extraction, format_ok, correct)
CASES = [
    ("n", "<answer>19</answer>", "19", "answer_tag", True, True),
    ("n", "<answer> 19. </answer>", " 19. ", "answer_tag", True, True),
    ("n", "so \\boxed{19}", "19", "boxed", False, True),
    ("n", "it is 12 then 19", "19", "last_number", False, True),
    ("n", "<answer>18</answer> no wait 19", "18", "answer_tag", True, False),  # the tag wins
    ("n", "no idea", None, "none", False, False),
    ("n", "<answer></answer>", "", "answer_tag", True, False),
    ("neg", "<answer>−4</answer>", "−4", "answer_tag", True, True),  # unicode minus
    ("neg", "<answer>+4</answer>", "+4", "answer_tag", True, False),
    ("big", "<answer>$1,200</answer>", "$1,200", "answer_tag", True, True),
    ("big", "<answer>1200.0</answer>", "1200.0", "answer_tag", True, True),  # numeric, not textual
    ("frac", "<answer>.5</answer>", ".5", "answer_tag", True, True),
    ("word", "<answer> paris </answer>", " paris ", "answer_tag", True, True),  # exact after lower/trim
    ("word", "<answer>Lyon</answer>", "Lyon", "answer_tag", True, False),
    ("same", "<answer>7</answer>", "7", "answer_tag", True, True),
    ("same", "<answer>7</answer>", "7", "answer_tag", True, True),
]


def _files(tmp_path: Path, cases: list[tuple], problems: list[tuple] = PROBLEMS_ROWS) -> tuple[list[Path], list[Path]]:
    p = tmp_path / "problems.parquet"
    write_table([{"prompt_id": pid, "task": "t", "split": "train", "prompt": "q", "answer": a, "tests": None,
                  "sources": None, "meta": None} for pid, a in problems], PROBLEMS, p)  # fmt: skip
    rows, seen = [], {}
    for pid, text, *_ in cases:
        k = seen[pid] = seen.get(pid, -1) + 1
        rows.append({"iteration": 0, "prompt_id": pid, "sample_idx": k, "prompt_token_ids": [1], "response_token_ids": [2],
                     "response_logprobs": [-0.1], "response_text": text, "num_response_tokens": 1, "finish_reason": "stop",
                     "policy_version": 0, "engine": "transformers", "temperature": 1.0, "seed": 0})  # fmt: skip
    r = tmp_path / "rollouts.parquet"
    write_table(rows, ROLLOUTS, r)
    return [r], [p]


@pytest.fixture()
def scored(tmp_path: Path) -> list[dict]:
    r, p = _files(tmp_path, CASES)
    out = score(r, p, VerifySection()).to_pylist()
    key = {(c[0], i): c for i, c in enumerate(CASES)}
    assert len(out) == len(key)
    return out


def test_extraction_and_comparison(scored: list[dict]) -> None:
    by_pid: dict[str, list[dict]] = {}
    for row in scored:
        by_pid.setdefault(row["prompt_id"], []).append(row)
    for pid in by_pid:
        expected = [c for c in CASES if c[0] == pid]
        got = sorted(by_pid[pid], key=lambda r: r["sample_idx"])
        for case, row in zip(expected, got, strict=True):
            _, text, extracted, extraction, format_ok, correct = case
            assert (row["extracted_answer"], row["extraction"], row["format_ok"], row["correct"]) == (
                extracted, extraction, format_ok, correct), text  # fmt: skip
            assert row["reward"] == (1.0 if correct else 0.0)
            assert row["verifier"] == ("sql_exact" if pid == "word" else "sql_numeric")


def test_reasons_are_readable(scored: list[dict]) -> None:
    reasons = {(r["prompt_id"], r["sample_idx"]): r["reason"] for r in scored}
    assert reasons[("n", 0)] == "correct: 19 = 19"
    assert reasons[("n", 2)] == "correct: 19 = 19 (no <answer> tag; taken from boxed)"
    assert reasons[("n", 4)] == "wrong: got 18, expected 19"
    assert reasons[("n", 5)].startswith("no_answer:")
    assert reasons[("n", 6)] == "wrong: empty answer, expected 19"


def test_group_advantages_hand_computed(scored: list[dict]) -> None:
    n = sorted((r for r in scored if r["prompt_id"] == "n"), key=lambda r: r["sample_idx"])
    rewards = [1, 1, 1, 1, 0, 0, 0]
    mean = 4 / 7
    std = math.sqrt(sum((x - mean) ** 2 for x in rewards) / 6)  # sample std
    for row, rw in zip(n, rewards, strict=True):
        assert row["group_size"] == 7
        assert row["group_mean"] == pytest.approx(mean)
        assert row["group_std"] == pytest.approx(std)
        assert row["advantage"] == pytest.approx((rw - mean) / (std + 1e-6))
    same = [r for r in scored if r["prompt_id"] == "same"]  # all correct: no signal
    assert [r["advantage"] for r in same] == [0.0, 0.0] and same[0]["group_std"] == 0.0


def test_format_reward_adds_to_correctness(tmp_path: Path) -> None:
    r, p = _files(tmp_path, CASES[:6])
    out = score(r, p, VerifySection(format_reward=0.25)).to_pylist()
    assert [row["reward"] for row in sorted(out, key=lambda x: x["sample_idx"])] == [1.25, 1.25, 1.0, 1.0, 0.25, 0.0]


def test_advantages_match_reference_on_random_rewards(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    problems = [(f"p{k}", "5") for k in range(20)]
    cases = []
    for k in range(20):
        size = int(torch.randint(1, 7, (1,), generator=g))
        for _ in range(size):
            cases.append((f"p{k}", "<answer>5</answer>" if torch.rand(1, generator=g) < 0.5 else "<answer>6</answer>"))
    r, p = _files(tmp_path, cases, problems)
    out = sorted(score(r, p, VerifySection()).to_pylist(), key=lambda x: (int(x["prompt_id"][1:]), x["sample_idx"]))
    rewards = torch.tensor([x["reward"] for x in out], dtype=torch.float64)
    group = torch.tensor([int(x["prompt_id"][1:]) for x in out])
    ref, _ = group_advantages(rewards, group, eps=1e-6)
    assert torch.allclose(torch.tensor([x["advantage"] for x in out], dtype=torch.float64), ref, atol=1e-9)


def test_rollout_for_unknown_problem_is_an_error_naming_it(tmp_path: Path) -> None:
    r, p = _files(tmp_path, [("n", "<answer>19</answer>"), ("ghost", "<answer>1</answer>")])
    with pytest.raises(VerifyError, match="ghost"):
        score(r, p, VerifySection())
