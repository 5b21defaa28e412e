"""The math-verify tier's worker processes (rlvr.verify.math on rlvr.verify.pool): a real
evaluation that hangs is timed out, and injectable check functions that raise, hang and kill
their worker give `verifier_error: ...` rows that are left out of their group's baseline with
advantage 0 and counted, while every other row is scored normally; a worker that cannot start is
a set-up error. No mocks: real worker processes, real DuckDB. The tier's answers:
tests/unit/verify/test_mathcheck.py."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr.config import VerifySection
from rlvr.schema import SCORES
from rlvr.verify import score_with_stats
from rlvr.verify.math import check_pairs
from tests.helpers.verify_inputs import write_pairs


def faulty_check(gold: str, pred: str) -> bool:
    """Stands in for math-verify: braces ignored, then equal strings; misbehaves on cue words.
    Module-level, so spawned workers can import it."""
    if "raise" in pred:
        raise RuntimeError(f"cannot compare {pred}")
    if "hang" in pred:
        time.sleep(60)
    if "crash" in pred:
        os._exit(3)  # like a segfault or an OOM kill: no exception, no reply
    return pred.replace("{", "").replace("}", "") == gold


def test_real_math_verify_pairs_including_a_real_timeout() -> None:
    pairs = [
        ("\\sqrt{2}", "2^{1/2}"),  # True: symbolic equivalence
        ("x^2+1", "1+x^2"),  # True
        ("[1,2)", "[1,2]"),  # False: interval ends differ
        ("\\frac{1}{2}", "0.5"),  # True
        ("\\text{Paris}", "sirap"),  # False: a word is not a product of symbols
        ("9^{9^{9^{9}}}", "1"),  # sympy evaluates the tower: a real hang, stopped by the timer
    ]
    verdicts, stats = check_pairs(pairs, timeout_s=2.0, workers=2)
    assert [v.correct for v in verdicts] == [True, True, False, True, False, None]
    assert verdicts[-1].error == "timeout after 2s"
    assert stats == {"rows": 6, "errors": 1, "timeouts": 1, "worker_restarts": 0}


def test_raise_hang_and_crash_are_errors_and_other_rows_go_on() -> None:
    pairs = [("a", "a"), ("a", "raise"), ("a", "b"), ("a", "hang"), ("a", "{a}"), ("a", "crash"), ("a", "a")]
    t = time.monotonic()
    verdicts, stats = check_pairs(pairs, timeout_s=0.5, workers=2, check=faulty_check)
    assert time.monotonic() - t < 30  # the hang was stopped at its timeout, not after 60 s
    assert [v.correct for v in verdicts] == [True, None, False, None, True, None, True]
    assert verdicts[1].error == "RuntimeError: cannot compare raise"
    assert verdicts[3].error == "timeout after 0.5s"
    assert verdicts[5].error == "worker process died (exit code 3) while checking this row"
    assert stats == {"rows": 7, "errors": 3, "timeouts": 1, "worker_restarts": 1}


def test_errored_rows_are_marked_counted_and_left_out_of_the_baseline(tmp_path: Path) -> None:
    # group g: gold x^2 is symbolic, so every row but the identical one goes to the check
    responses = [
        ("g", "<answer>x^{2}</answer>"),  # check: True -> reward 1
        ("g", "<answer>x^{3}</answer>"),  # check: False -> 0
        ("g", "<answer>\\raise{x}</answer>"),  # check raises -> verifier_error
        ("g", "<answer>x^2</answer>"),  # identical text: decided by SQL (sql_exact), reward 1
        ("g", "<answer>\\crash{x}</answer>"),  # worker dies -> verifier_error
        ("n", "<answer>7</answer>"),  # another group, numeric, untouched by the errors
        ("n", "<answer>8</answer>"),
    ]
    r, p = write_pairs(tmp_path, [("g", "x^2"), ("n", "7")], responses)
    table, stats = score_with_stats(r, p, VerifySection(mathverify_timeout_s=2.0), check=faulty_check)
    assert table.schema == SCORES
    rows = {(x["prompt_id"], x["sample_idx"]): x for x in table.to_pylist()}
    assert stats["undecided"] == 4 and stats["verifier_errors"] == 2 and stats["worker_restarts"] == 1
    g = [rows[("g", k)] for k in range(5)]
    assert [x["verifier"] for x in g] == ["math_verify", "math_verify", "math_verify", "sql_exact", "math_verify"]
    assert [x["correct"] for x in g] == [True, False, False, True, False]
    assert g[2]["reason"].startswith("verifier_error: math_verify: RuntimeError: cannot compare \\raise{x}")
    assert g[4]["reason"].startswith("verifier_error: math_verify: worker process died (exit code 3)")
    # baseline over the three decided rows, rewards [1, 0, 1]: mean 2/3, sample std sqrt(1/3)
    mean, std = 2 / 3, math.sqrt(((1 / 3) ** 2 * 2 + (2 / 3) ** 2) / 2)
    for x, rw in zip([g[0], g[1], g[3]], [1.0, 0.0, 1.0], strict=True):
        assert (x["group_size"], x["reward"]) == (3, rw)
        assert x["group_mean"] == pytest.approx(mean) and x["group_std"] == pytest.approx(std)
        assert x["advantage"] == pytest.approx((rw - mean) / (std + 1e-6))
    for x in (g[2], g[4]):
        assert (x["advantage"], x["group_size"], x["reward"]) == (0.0, 3, 0.0)
    n = [rows[("n", 0)], rows[("n", 1)]]
    assert [x["correct"] for x in n] == [True, False] and n[0]["group_size"] == 2
    assert n[0]["advantage"] == pytest.approx(0.5 / (math.sqrt(0.5) + 1e-6))


def test_a_group_where_every_row_errored_has_no_baseline_and_zero_advantages(tmp_path: Path) -> None:
    r, p = write_pairs(tmp_path, [("g", "x^2")], [("g", "<answer>\\raise{a}</answer>"), ("g", "<answer>\\raise{b}</answer>")])
    table, stats = score_with_stats(r, p, VerifySection(), check=faulty_check)
    assert stats["verifier_errors"] == 2
    for x in table.to_pylist():
        assert (x["group_size"], x["group_mean"], x["group_std"], x["advantage"]) == (0, 0.0, 0.0, 0.0)


def test_a_worker_that_cannot_start_is_a_setup_error_not_row_errors(tmp_path: Path) -> None:
    script = tmp_path / "unguarded.py"  # spawned workers re-import a script's main module
    script.write_text("from rlvr.verify.math import check_pairs\nprint(check_pairs([('1', '1')], timeout_s=1, workers=1))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "MathCheckError: a math-verify worker process did not start" in out.stderr
    assert 'if __name__ == "__main__":' in out.stderr
