"""The answer contract (README "The answer contract"; rlvr/verify/sql/markers.sql, verify_markers.sql):
one table per rule, text -> what is read, or the reason it is refused; case names are the test ids.

The tables run through the real verify pass (score: DuckDB, math-verify for symbolic golds) under the
default config (strict), except LENIENT; markers.sql's macros are tested one by one in
tests/unit/verify/sql/test_markers.py.

    .venv/bin/python -m pytest -q tests/unit/verify/test_contract.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import VerifySection
from rlvr.verify import score
from tests.helpers.verify_inputs import write_inputs

R1_THINKING = "Okay, so Janet has 16 eggs. She eats 3 and bakes 4, so 9 are left: 9 * 2 = 18, or is it 16? No, 18.\n"

# Each model family's final-answer format, with the right answer 18: all must be paid.
# (id, response, extraction)
FAMILIES = [
    ("qwen-math-box", "Janet sells 16 - 3 - 4 = 9 eggs at $2 each.\n\nTherefore, the answer is $\\boxed{18}$.", "boxed"),
    ("qwen-math-display-box", "She makes 9 \\times 2 dollars.\n\\[\n\\boxed{18}\n\\]", "boxed"),
    (
        "r1-distill-lone-think",
        R1_THINKING + "</think>\n\nShe makes **$18** a day.\n\n**Final Answer**\n\\[\n\\boxed{18}\n\\]",
        "boxed",
    ),
    ("r1-think-span", "<think>\n" + R1_THINKING + "</think>\nJanet earns $18 a day.\n\n**Final Answer**\n\\boxed{18}", None),
    (
        "llama3-final-answer-is",
        "## Step 1: eggs left\n16 - 3 - 4 = 9.\n## Step 2: money\n9 * 2 = 18.\n\nThe final answer is: 18",
        "final_line",
    ),
    (
        "llama3-final-answer-box",
        "## Step 1: eggs left\n16 - 3 - 4 = 9, and 9 * 2 = 18.\n\nThe final answer is: $\\boxed{18}$",
        "boxed",
    ),
    (
        "llama31-math-box-sign-off",
        "## Step 1: eggs left\n16 - 3 - 4 = 9, and 9 * 2 = 18.\n\nTherefore, the final answer is: $\\boxed{18}$. I hope it is correct.",
        "boxed",
    ),
    (
        "minerva",
        "She sells $16-3-4=9$ eggs for $9\\cdot 2=18$ dollars.\nFinal Answer: The final answer is $18$. I hope it is correct.",
        "final_line",
    ),
    (
        "gsm8k",
        "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18",
        "gsm8k",
    ),
    ("answer-tag", "16 - 3 - 4 = 9 eggs, 9 * 2 = 18 dollars.\n<answer>18</answer>", "answer_tag"),
    ("final-answer-colon", "9 eggs at $2.\nFinal Answer: 18", "final_line"),
    ("final-answer-bold", "9 eggs at $2.\n**Final Answer:** $18", "final_line"),
    ("answer-colon", "9 eggs at $2.\nAnswer: 18.", "final_line"),
    ("tag-and-box-agree", "<answer>18</answer>\n\\boxed{18}", "answer_tag"),
]

# Inside a marker: the forms the contract lists, for the value gold 18. (id, response, reason or None = paid)
FORMS = [
    ("value", "<answer>18</answer>", None),
    ("decimal", "<answer>18.0</answer>", None),
    ("latex-value", "\\boxed{\\frac{36}{2}}", "wrong: got \\frac{36}{2}, expected 18 (a fraction not in lowest terms"),
    ("currency", "<answer>\\$18</answer>", None),
    ("unit", "<answer>18 cm</answer>", None),
    ("unit-in-text", "\\boxed{18\\text{ cm}}", None),
    ("unit-power-in-math", "<answer>18 cm$^2$</answer>", None),
    ("equation-name", "<answer>x = 18</answer>", None),
    ("equation-that-holds", "<answer>9 \\times 2 = 18</answer>", None),
    ("equation-chain", "<answer>x = 9 \\cdot 2 = 18</answer>", None),
    (
        "equation-false",
        "<answer>9 \\times 3 = 18</answer>",
        "wrong: refused by the contract: an equation whose earlier sides do not give",
    ),
    ("equation-word-side", "<answer>total = 18</answer>", "wrong: refused by the contract: words inside the marker"),
    ("expression", "<answer>9 * 2</answer>", "wrong: refused by the contract: an expression to evaluate, not a value"),
    ("words", "<answer>She makes 18 dollars</answer>", "wrong: refused by the contract: words inside the marker"),
    ("unlisted-unit", "<answer>18 eggs</answer>", "wrong: refused by the contract: words inside the marker"),
    ("hedge-or", "<answer>18 or 19</answer>", "wrong: refused by the contract: words inside the marker"),
    ("hedge-list", "<answer>17, 18</answer>", "wrong: refused by the contract: several values inside the marker"),
    ("hedge-approx", "<answer>18 \\approx 19</answer>", "wrong: refused by the contract: several values inside the marker"),
    ("number-in-words", "<answer>eighteen</answer>", "wrong: refused by the contract: words inside the marker"),
]

# Reasoning is never the answer. (id, response, reason or None = paid)
THINK = [
    ("box-after-think", "<think>maybe 17</think>\\boxed{18}", None),
    ("box-only-in-think", "<think>so \\boxed{18}</think> I am not sure.", "no_answer: no answer marker"),
    ("lone-close-hides-reasoning", "\\boxed{17} hmm\n</think>\n\\boxed{18}", None),
    ("lone-close-no-marker-after", "\\boxed{18}\n</think>\nDone.", "no_answer: no answer marker"),
    ("think-never-closed", "\\boxed{18}\n<think>let me reconsider \\boxed{19}", None),
    ("reasoning-holds-the-number", "9 * 2 = 18, so she makes 18 dollars.", "no_answer: no answer marker"),
]

# Several markers and what stands around the last one. (id, response, reason or None = paid)
MARKERS = [
    ("same-answer-twice", "\\boxed{18} so <answer>18</answer>", None),
    ("empty-tag-then-answer", "Put it in <answer></answer>: <answer>18</answer>", None),
    ("two-answers", "<answer>17</answer> <answer>18</answer>", "wrong: markers that hold different answers (17; 18): a hedge"),
    ("tag-and-box-differ", "\\boxed{17}\n<answer>18</answer>", "wrong: markers that hold different answers (17; 18)"),
    ("final-line-differs", "\\boxed{17}\nFinal Answer: 18", "wrong: markers that hold different answers (17; 18)"),
    ("text-after-marker", "\\boxed{18}\n\nWait, it is 19.", "wrong: text after the last marker"),
    ("denied-after-marker", "<answer>18</answer> is wrong.", "wrong: text after the last marker"),
    ("question-after-marker", "Is it $\\boxed{18}$?", "wrong: text after the last marker"),
    ("unit-after-marker", "She makes $\\boxed{18}$ dollars.", None),
    ("unit-power-after-marker", "The area is $\\boxed{18}$ cm$^2$.", None),
    ("words-after-unit", "She makes $\\boxed{18}$ dollars a day.", "wrong: text after the last marker"),
    ("sign-off-after-marker", "So it is $\\boxed{18}$. I hope it is correct.", None),
    ("sign-off-then-words", "So it is $\\boxed{18}$. I hope it is correct, or 19.", "wrong: text after the last marker"),
    ("words-then-sign-off", "So it is $\\boxed{18}$, or 19. I hope it is correct.", "wrong: text after the last marker"),
    ("sign-before-box", "So $x = -\\boxed{18}$.", "wrong: a marker inside an expression"),
    ("power-of-box", "$\\boxed{18}^2$", "wrong: text after the last marker"),
    ("box-in-fraction", "$\\frac{1}{\\boxed{18}}$", "wrong: a marker inside an expression"),
    ("relation-before-box", "$x \\geq \\boxed{18}$", "wrong: a marker inside an expression"),
    ("digit-before-tag", "1<answer>8</answer>", "wrong: a marker inside an expression"),
    ("box-in-a-box", "\\boxed{\\boxed{18}}", None),
    ("box-in-a-tag", "<answer>$\\boxed{18}$</answer>", None),
    ("boxes-in-a-box", "\\boxed{\\boxed{1}\\boxed{8}}", "wrong: a marker that holds a \\boxed{} beside more content"),
    ("boxes-in-a-tag", "<answer>\\boxed{1} \\boxed{8}</answer>", "wrong: a marker that holds a \\boxed{} beside more content"),
    ("box-beside-a-digit", "<answer>\\boxed{1}8</answer>", "wrong: a marker that holds a \\boxed{} beside more content"),
    ("unclosed-tag", "<answer>18", "no_answer: an <answer> tag that is never closed"),
    ("unreadable-box", "\\boxed{\\frac{1}{2} then 18", "no_answer: a \\boxed{ that cannot be read"),
    ("final-line-not-last", "Final Answer: 18\nThat is all.", "no_answer: no answer marker"),
    ("answer-is-prose", "The answer is 18.", "no_answer: no answer marker"),
]

# verify.extraction = 'lenient' (for models that write bare numbers): a lone number ending the last line.
LENIENT = [
    ("lone-number", "She makes 18", None),
    ("number-then-full-stop", "So she makes 18.", None),
    ("number-then-unit", "The side is 18 cm.", None),
    ("currency", "She makes $18.", None),
    ("marker-first", "18\n<answer>17</answer>", "wrong: got 17, expected 18"),
    ("computation-on-the-line", "9 * 2 = 18.", "no_answer: no answer marker, and no lone number"),
    ("two-numbers", "It is 17 or 18", "no_answer: no answer marker, and no lone number"),
    ("word-after", "She makes 18 dollars a day.", "no_answer: no answer marker, and no lone number"),
    ("number-not-on-last-line", "She makes 18.\nThat is the answer.", "no_answer: no answer marker, and no lone number"),
]

TABLES = {"forms": FORMS, "think": THINK, "markers": MARKERS}


def _score(tmp_path: Path, gold: str, texts: list[str], cfg: VerifySection | None = None) -> list[dict]:
    r, p = write_inputs(tmp_path, [{"prompt_id": "g", "answer": gold, "task": "math"}], [("g", t) for t in texts])
    return sorted(score(r, p, cfg or VerifySection()).to_pylist(), key=lambda x: x["sample_idx"])


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    out = {}
    for name, table in {**TABLES, "families": FAMILIES}.items():
        out[name] = _score(tmp_path_factory.mktemp(name), "18", [text for _, text, _ in table])
    lenient = VerifySection(extraction="lenient")
    out["lenient"] = _score(tmp_path_factory.mktemp("lenient"), "18", [t for _, t, _ in LENIENT], lenient)
    return out


def _check(row: dict, reason: str | None) -> None:
    if reason is None:
        assert (row["correct"], row["reward"]) == (True, 1.0), row["reason"]
    else:
        assert not row["correct"] and row["reward"] == 0.0, row["reason"]
        assert row["reason"].startswith(reason), row["reason"]


@pytest.mark.parametrize("k", range(len(FAMILIES)), ids=[c[0] for c in FAMILIES])
def test_each_model_family_is_paid_for_its_right_answer(scored: dict[str, list[dict]], k: int) -> None:
    _, _, extraction = FAMILIES[k]
    row = scored["families"][k]
    _check(row, None)
    assert extraction is None or row["extraction"] == extraction


@pytest.mark.parametrize(
    ("table", "k"),
    [(t, k) for t, rows in TABLES.items() for k in range(len(rows))],
    ids=[f"{t}-{c[0]}" for t, rows in TABLES.items() for c in rows],
)
def test_contract_rule(scored: dict[str, list[dict]], table: str, k: int) -> None:
    _check(scored[table][k], TABLES[table][k][2])


@pytest.mark.parametrize("k", range(len(LENIENT)), ids=[c[0] for c in LENIENT])
def test_lenient_reads_only_a_lone_last_number(scored: dict[str, list[dict]], k: int) -> None:
    _check(scored["lenient"][k], LENIENT[k][2])


# A symbolic gold goes to math-verify as before; words inside the marker are refused first.
SYMBOLIC = [
    ("box", "\\boxed{2\\sqrt{3}}", None),
    ("equal-form", "<answer>\\sqrt{12}</answer>", None),
    ("name-equals", "<answer>x = 2\\sqrt{3}</answer>", None),
    ("unit", "$\\boxed{2\\sqrt{3}\\text{ cm}}$", None),
    (
        "words",
        "<answer>The length is 2\\sqrt{3}</answer>",
        "wrong: got thelengthis2\\sqrt{3}, expected 2\\sqrt{3} (words inside the marker)",
    ),
    (
        "unevaluated",
        "<answer>\\sqrt{4 \\cdot 3}</answer>",
        "wrong: got \\sqrt{4\\cdot3}, expected 2\\sqrt{3} (an unevaluated expression",
    ),
]


@pytest.mark.parametrize("k", range(len(SYMBOLIC)), ids=[c[0] for c in SYMBOLIC])
def test_symbolic_answers_inside_a_marker(tmp_path_factory: pytest.TempPathFactory, k: int) -> None:
    rows = _symbolic_rows(tmp_path_factory)
    _check(rows[k], SYMBOLIC[k][2])


_SYMBOLIC_ROWS: list[dict] = []


def _symbolic_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    if not _SYMBOLIC_ROWS:  # scored once: math-verify starts worker processes
        _SYMBOLIC_ROWS.extend(_score(tmp_path_factory.mktemp("symbolic"), "2\\sqrt{3}", [t for _, t, _ in SYMBOLIC]))
    return _SYMBOLIC_ROWS
