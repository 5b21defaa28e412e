"""The verify pass stands against any response text: numbers past every integer type, deep braces, long texts,
control characters. A row is wrong or right; the pass never fails for all the rows of an iteration because one
response overflowed a cast (a 40-digit fraction for a symbolic gold once stopped the stage).

Every form below is written with a number of 40 digits (a few with 400 or more), inside each kind of marker, against golds of each
kind (a value, a fraction, a symbolic closed form, an interval, a list, an expression, a 41-digit integer); none of
the answers equals its gold, so each earns 0 with a reason.

    .venv/bin/python -m pytest -q tests/unit/verify/test_verify_stands.py
"""

from __future__ import annotations

from pathlib import Path

from rlvr.config import VerifySection
from rlvr.verify import score
from tests.helpers.verify_inputs import write_inputs

GOLDS = ["12", "\\frac{3}{4}", "0.5", "2\\sqrt{3}", "(0, 1)", "1, 2", "x^2+1", "\\{1, 2\\}", "1" * 40 + "2"]
FORMS = [
    "{n}", "-{n}", "{n}.{n}", "{n}/2", "2/{n}", "{n}/{n}", "\\frac{{{n}}}{{2}}", "\\frac{{2}}{{{n}}}", "-\\frac{{{n}}}{{{n}}}",
    "{n}\\frac{{1}}{{2}}", "1\\frac{{{n}}}{{{n}}}", "{n} 1/2", "0.\\overline{{{n}}}", "{n}.\\overline{{3}}", "0.({n})",
    "0.{n}...", "{n}%", "{n}e5", "1e999", "1e-999", "{n}e999", "1.5 \\times 10^{{999}}", "\\sqrt{{{n}}}", "2\\sqrt{{{n}}}/12",
    "\\sqrt[{n}]{{{n}}}", "{n}^{{{n}}}", "({n}, {n})", "\\{{{n}\\}}", "[{n}, {n})", "x = {n}", "{n} = {n}",
    "{n} \\cdot {n} = {n}", "{n} + {n} = 2", "\\${n}", "{n} cm", "{n}\\text{{ cm}}^2", "\\frac{{{n}\\pi}}{{{n}}}",
    "\\frac{{\\sqrt{{{n}}}}}{{{n}}}", "{n}x^{{{n}}}+1", "\\binom{{{n}}}{{2}}", "{n}!",
]  # fmt: skip
WRAPS = ["<answer>{}</answer>", "So $\\boxed{{{}}}$."]  # (a final-answer line and #### give the same bodies)
ODD = [
    "\\boxed{" * 50 + "1" + "}" * 50,  # braces past the pattern's five levels
    "<answer>" + "{" * 1000 + "</answer>",
    "<answer>" + "9" * 20000 + "</answer>",
    "<answer>" + "9" * 400 + "e999</answer>",  # (past DOUBLE too)
    "<answer>\\frac{" + "9" * 400 + "}{2}</answer>",
    "<answer>\\sqrt{" + "9" * 400 + "}</answer>",
    "x " * 50000 + "<answer>3</answer>",  # a long text
    "<answer>1\x002</answer>",  # a NUL inside the tag
    "<answer>\u202e21</answer>",  # a right-to-left override
    "<answer>" + "\u0661" * 60 + "</answer>",  # Arabic-Indic digits past HUGEINT
]


def test_every_hostile_answer_gets_a_verdict_and_no_reward(tmp_path: Path) -> None:
    texts = [w.format(f.format(n="1" * 40)) for f in FORMS for w in WRAPS] + ODD
    problems = [{"prompt_id": f"g{k}", "task": "math", "answer": g} for k, g in enumerate(GOLDS)]
    responses = [(f"g{k}", t) for k in range(len(GOLDS)) for t in texts]
    rows = score(*write_inputs(tmp_path, problems, responses), VerifySection()).to_pylist()
    assert len(rows) == len(responses)
    paid = [(r["prompt_id"], r["reason"]) for r in rows if r["reward"] != 0 or r["correct"]]
    assert paid == []
    assert all(r["reason"] for r in rows)
    # an answer math-verify cannot read is wrong, not a verifier error (which would leave it out of its group's
    # baseline: no penalty); only a timeout is no verdict ('{' * 1000 keeps math-verify busy past its timer)
    assert [r["reason"][:80] for r in rows if r["verifier_error"] and "timeout after" not in r["reason"]] == []
