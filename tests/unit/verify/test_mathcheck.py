"""The math-verify tier (rlvr.verify.math) and its place in rlvr.verify.score_with_stats.

Real math-verify on symbolic rows through the verify pass, and inequalities and intervals as
answers. Workers that hang, raise, crash or cannot start: tests/integration/test_mathcheck_workers.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import VerifySection
from rlvr.verify import score_with_stats
from rlvr.verify.math import inequality_interval, math_verify_check, run_one
from tests.helpers.verify_inputs import write_pairs


def test_score_uses_real_math_verify_for_symbolic_rows(tmp_path: Path) -> None:
    responses = [
        ("s", "so \\boxed{\\sqrt{2}}"),  # identical normalised text: sql_exact
        ("s", "<answer>2^{1/2}</answer>"),  # math_verify True
        ("s", "<answer>\\sqrt{3}</answer>"),  # math_verify False
        ("h", "<answer>0.5</answer>"),  # gold \frac{1}{2} is an integer fraction: decided in SQL
        ("h", "<answer>\\sqrt{1/4}</answer>"),  # numeric gold, an expression equal to it: not a value, wrong in SQL
        ("h", "<answer>nineteen</answer>"),  # numeric gold, plain word: wrong in SQL
    ]
    r, p = write_pairs(tmp_path, [("s", "\\sqrt{2}"), ("h", "\\frac{1}{2}")], responses)
    table, stats = score_with_stats(r, p, VerifySection())
    got = [(x["prompt_id"], x["verifier"], x["correct"]) for x in table.to_pylist()]
    assert got == [
        ("h", "sql_numeric", True),
        ("h", "sql_numeric", False),
        ("h", "sql_numeric", False),
        ("s", "sql_exact", True),
        ("s", "math_verify", True),
        ("s", "math_verify", False),
    ]
    assert stats["undecided"] == 2 and stats["verifier_errors"] == 0
    assert [x["reason"] for x in table.to_pylist()] == [
        "correct: 0.5 = \\frac{1}{2}",
        "wrong: refused by the contract: an expression to evaluate, not a value (\\sqrt{1/4}); the gold, \\frac{1}{2}, is a value",
        "wrong: refused by the contract: words inside the marker (nineteen); the gold, \\frac{1}{2}, is a value",
        "correct: \\sqrt{2} = \\sqrt{2} (no <answer> tag; taken from boxed)",
        "correct: 2^{1/2} = \\sqrt{2} (math_verify)",
        "wrong: got \\sqrt{3}, expected \\sqrt{2} (math_verify: not equivalent)",
    ]


@pytest.mark.parametrize(
    ("pred", "interval"),
    [
        ("0 < x < 1", "(0, 1)"),
        ("0\\lex\\le1", "[0, 1]"),  # as the SQL tier passes it: spaces gone, '\\le x' is '\\lex'
        ("0 \\leq x < 1", "[0, 1)"),
        ("1 > x > 0", "(0, 1)"),  # read right to left
        ("1 \\ge x > 0", "(0, 1]"),
        ("x \\ge 2", "[2, \\infty)"),
        ("x<=3", "(-\\infty, 3]"),
        ("3 > x", "(-\\infty, 3)"),
        ("\\frac{1}{2} < t \\le 5", "(\\frac{1}{2}, 5]"),
        ("0 < x > 1", None),  # no interval
        ("x = 2", None),
        ("x \\in (0, 1)", None),  # math-verify reads this one itself
    ],
)
def test_an_inequality_in_one_variable_is_the_interval_it_describes(pred: str, interval: str | None) -> None:
    assert inequality_interval(pred) == interval


def test_an_interval_gold_takes_its_inequality_and_only_for_an_interval_gold() -> None:
    assert math_verify_check("(0, 1)", "0 < x < 1")
    assert math_verify_check("[2, \\infty)", "x\\ge2")
    assert not math_verify_check("(0, 1)", "0 \\le x < 1")
    assert not math_verify_check("x^2+1", "0 < x < 1")  # not an interval gold: never rewritten


def test_an_answer_math_verify_cannot_read_is_wrong_with_the_reason(tmp_path: Path) -> None:
    """math-verify raises on a 5,000-digit integer (Python's limit on int() of a string); as a verifier error
    the row would be left out of its group's baseline, so a wrong answer would escape its penalty."""
    r, p = write_pairs(tmp_path, [("s", "2\\sqrt{3}")], [("s", "<answer>" + "9" * 5000 + "</answer>")])
    table, stats = score_with_stats(r, p, VerifySection())
    row = table.to_pylist()[0]
    assert (row["verifier"], row["correct"], row["verifier_error"], stats["verifier_errors"]) == ("math_verify", False, False, 0)
    assert "(math_verify cannot read the answer: " in row["reason"] and row["reason"].startswith("wrong: got 999")


def test_an_unreadable_gold_is_still_a_verifier_error() -> None:
    """The gold is the dataset's: math-verify raising on it is the verifier's fault, not the answer's."""
    assert run_one(math_verify_check, "9" * 5000 + "x", "x", 5.0).error.startswith("SympifyError")
    v = run_one(math_verify_check, "x", "9" * 5000 + "x", 5.0)
    assert (v.correct, v.error, v.unread.split(":")[0]) == (False, None, "SympifyError")
