"""The answer contract's macros (rlvr/verify/sql/markers.sql), each called directly by one parametrised table:
text -> the value the macro returns, with the case names as test ids. Each table follows its macro's comment,
which is its contract; what the rules mean in prose: docs/verifiers.md. End-to-end cases: tests/unit/verify/test_contract.py.

    .venv/bin/python -m pytest -q tests/unit/verify/sql/test_markers.py
"""

from __future__ import annotations

import pytest

from tests.helpers.sql_macros import call_macro, macro_cases

# How a macro that is a pattern, not a function, is called; every other macro is called as f"{macro}($a0)".
CALLS = {
    "box_pattern": "regexp_extract_all($a0, box_pattern())",
    "marker_pattern": "regexp_extract_all($a0, marker_pattern())",
    "sign_off": "regexp_matches($a0, sign_off())",
}

NEST5 = "\\boxed{" + "{" * 5 + "x" + "}" * 6  # braces nested five levels inside the box's own
NEST6 = "\\boxed{" + "{" * 6 + "x" + "}" * 7

# mark_norm is norm_answer; its cases on digits and signs take the norm_plain shortcut (verify.sql normalises golds by it)
MARK_NORM = [
    ("integer", "42", "42"),
    ("negative-decimal", "-3.5", "-3.5"),
    ("leading-zeros", "007", "007"),
    ("thousands-group", "1,234", "1,234"),
    ("dollars-grouped", "$1,234.50", "1,234.50"),
    ("euro", "€12", "12"),
    ("pound-full-stop", "£7.", "7"),
    ("unicode-minus", "−5", "-5"),
    ("leading-plus", "+5", "5"),
    ("percent", "50%", "50%"),
    ("slash-fraction", "3/4", "3/4"),
    ("trailing-comma", "12,", "12"),
    ("empty", "", ""),
    ("trailing-point", "1.", "1"),
    ("plus-minus", "+-3", "-3"),
    ("two-points", "..", "."),  # one trailing '.' dropped
    ("two-dollars", "$$", ""),
    ("latex-fraction", "\\frac{36}{2}", "\\frac{36}{2}"),
    ("box", "\\boxed{18}", "18"),
    ("equation-lowered", "X = 18", "x=18"),
    ("latex-percent", "18\\%", "18%"),
    ("latex-dollar", "\\$18", "18"),
]

MACROS = {
    "box_pattern": [
        ("two-boxes", "x \\boxed{1} y \\boxed{\\frac{1}{2}}", ["\\boxed{1}", "\\boxed{\\frac{1}{2}}"]),
        ("space-before-brace", "\\boxed {a}", ["\\boxed {a}"]),
        ("box-in-a-box", "\\boxed{\\boxed{18}}", ["\\boxed{\\boxed{18}}"]),
        ("five-levels", NEST5, [NEST5]),
        ("six-levels", NEST6, []),
        ("unclosed", "\\boxed{\\frac{1}{2} then 18", []),
        ("no-backslash", "boxed{3}", []),
    ],
    "marker_pattern": [
        ("each-kind-in-order", "<answer>1</answer> \\boxed{2}\n#### 3", ["<answer>1</answer>", "\\boxed{2}", "#### 3"]),
        ("box-inside-tag", "<answer>\\boxed{2}</answer>", ["<answer>\\boxed{2}</answer>"]),
        ("tag-over-lines", "<answer>a\nb</answer>", ["<answer>a\nb</answer>"]),
        ("indented-gsm8k-line", "  #### 7 \nmore", ["  #### 7 "]),
        ("gsm8k-not-opening-line", "x #### 5", []),
        ("unclosed-tag", "<answer>1", []),
        ("final-answer-line", "Final Answer: 18", []),
    ],
    "marker_glued": [
        ("sign", "$-\\boxed{12}$", True),
        ("relation-command", "$x \\geq \\boxed{12}$", True),
        ("relation-sign", "$x > \\boxed{3}$", True),
        ("digit-before-tag", "1<answer>8</answer>", True),
        ("point", "3.\\boxed{4}", True),
        ("in-a-fraction", "$\\frac{1}{\\boxed{18}}$", True),
        ("bracket", "(\\boxed{4})", True),
        ("operator-command", "2 \\times \\boxed{9}", True),
        ("function-command", "\\log \\boxed{3}", True),
        ("equals", "x = \\boxed{18}", False),
        ("bullet-opens-text", "- \\boxed{12}", False),
        ("bullet-opens-a-later-line", "So:\n- \\boxed{12}", False),
        ("slanted-relation-command", "$n \\geqslant \\boxed{4}$", True),
        ("math-openers", "\\(\\boxed{18}\\) and \\[\\boxed{18}\\]", False),
        ("box-in-a-box", "\\boxed{\\boxed{18}}", False),
        ("closing-tag", "</think>\\boxed{3}", False),
    ],
    "box_beside": [
        ("boxes", "\\boxed{1}\\boxed{8}", True),
        ("box-then-digit", "\\boxed{1}8", True),
        ("box-then-unit", "\\boxed{18} cm", True),
        ("name-then-box", "x = \\boxed{18}", True),
        ("one-box", "\\boxed{18}", False),
        ("box-in-math", " \\(\\boxed{18}\\). ", False),
        ("box-in-dollars", "$\\boxed{18}$", False),
        ("no-box", "18", False),
    ],
    "sign_off": [
        ("minerva", ". I hope it is correct.", True),
        ("no-full-stops", "I hope it is correct", True),
        ("extra-spaces", "  I  hope   it is correct", True),
        ("other-words", "I hope this is correct.", False),
        ("contraction", "I hope it's correct.", False),
    ],
    "ends_answer": [
        ("nothing", "", True),
        ("closers", "$.\n\\]", True),
        ("unit", "$ cm.", True),
        ("unit-power-in-math", "$ cm$^2$.", True),
        ("percent", " %.", True),
        ("unit-in-text", "\\text{ cm}^{2}", True),
        ("two-word-unit", " square feet.", True),
        ("power-without-unit", "$$^2$", False),
        ("not-a-unit", " eggs.", False),
        ("unit-case-exact", " M.", False),
        ("words", " is wrong.", False),
        ("question", "?", False),
        ("factorial", "!", False),
        ("words-after-unit", "$ dollars a day.", False),
        ("sign-off", "$. I hope it is correct.", True),
        ("unit-sign-off", " cm. I hope it is correct.", True),
        ("sign-off-not-last", ". I hope it is correct. 19", False),
        ("other-hope", ". I hope this helps!", False),
    ],
    "marker_kind": [
        ("answer-tag", "<answer>18</answer>", "answer_tag"),
        ("box", "\\boxed{18}", "boxed"),
        ("gsm8k", "#### 18", "gsm8k"),
        ("indented-gsm8k", "  #### 18", "gsm8k"),
    ],
    "marker_body": [
        ("answer-tag", "<answer>18</answer>", "18"),
        ("tag-kept-as-written", "<answer>\n 18 \n</answer>", "\n 18 \n"),
        ("empty-tag", "<answer></answer>", ""),
        ("box", "\\boxed {x^{2}}", "x^{2}"),
        ("box-in-a-box", "\\boxed{\\boxed{1}}", "\\boxed{1}"),
        ("gsm8k-trimmed", "  ####   1,234  ", "1,234"),
    ],
    "last_line": [
        ("two-lines", "a\nb", "b"),
        ("one-line", "one line", "one line"),
        ("trailing-blank-lines", "a\nb\n\n  \n", "b"),
        ("trailing-tab-line", "a\n\t\n", "a"),
        ("crlf", "a\r\nb\r\n", "b"),
        ("indent-kept", "a\n  b", "  b"),
        ("empty", "", ""),
    ],
    "final_answer": [
        ("the-final-answer-is", "Work.\nThe final answer is 18", "18"),
        ("the-final-answer-is-colon", "Work.\nThe final answer is: $18$.", "$18$"),
        ("minerva", "Final Answer: The final answer is $18$. I hope it is correct.", "$18$"),
        ("final-answer-colon", "Final answer: 18", "18"),
        ("bold", "**Answer:** 18", "18"),
        ("all-bold", "**Answer: 18**", "18"),
        ("heading-and-quote", "## Final Answer: 18\n> Answer: 19", "19"),
        ("sign-off", "Answer: 18. I hope it is correct.", "18"),
        ("blank-lines-after", "Answer: 18\n\n", "18"),
        ("no-colon", "Answer 18", ""),
        ("other-opening", "The final answer: 18", ""),
        ("not-the-last-line", "Answer: 18\nmore", ""),
        ("prose", "So the answer is 18.", ""),
    ],
    "lenient_number": [
        ("lone", "so 18.", "18"),
        ("unit", "it is 18 cm", "18"),
        ("fraction", "half: 1/2", "1/2"),
        ("currency", "She makes $18.", "$18"),
        ("thousands-group-and-unit", "The total is 1,234 dollars.", "1,234"),
        ("percent", "It is 50%.", "50%"),
        ("last-line-only", "17\n18", "18"),
        ("two-numbers", "9 * 2 = 18", ""),
        ("other-digit", "Step 2: 18", ""),
        ("word-after", "18 eggs", ""),
        ("not-on-last-line", "18\nDone.", ""),
    ],
    "value_unit": [
        ("plain", "18", "18"),
        ("unit", "18 cm", "18"),
        ("text-unit", "18\\text{ cm}", "18"),
        ("mathrm-after-space", "18\\,\\mathrm{kg}", "18"),
        ("squared", "18 m^2", "18"),
        ("squared-in-math", "18 m$^{2}$", "18"),
        ("currency-stays", "$18 dollars", "$18"),
        ("percent-stays", "50% units", "50%"),
        ("not-a-unit", "18 eggs", "18 eggs"),
        ("fourth-power", "18 cm^4", "18 cm^4"),
        ("no-number", "x cm", "x cm"),
    ],
    "unit_num": [
        ("unit", "30 cm", "30"),
        ("text-unit", "5\\text{ cm}", "5"),
        ("decimal-unit", "-3.5\\text{ kg}", "-3.5"),
        ("no-unit", "18", ""),
        ("not-a-unit", "18 eggs", ""),
    ],
    "mark_norm": MARK_NORM,
    "mark_value": [
        ("plain", "18", "18"),
        ("unit-dropped", "18 cm", "18"),
        ("text-unit-dropped", "18\\text{ cm}", "18"),
        ("currency-and-unit", "$18 dollars", "18"),
        ("not-a-unit", "18 eggs", "18eggs"),
        ("unit-case-exact", "18 M", "18m"),
        ("equation", "X = 18", "x=18"),
    ],
    "arith_ops": [
        ("times", "9 \\times 2", "9*2"),
        ("cdot", "9 \\cdot 2", "9*2"),
        ("unicode-operators", "9·2 × 1 ÷ 3 − 1", "9*2*1/3-1"),
        ("div", "36 \\div 2", "36/2"),
        ("dollars-and-thousands", "$1,234 + 1$", "1234+1"),
        ("latex-space", "1\\,000", "1000"),
        ("not-a-group", "1,2", "1,2"),
    ],
    "arith_value": [
        ("number", "-3.5", -3.5),
        ("sum", "10 + 8", 18.0),
        ("sum-and-difference", "10+10-2", 18.0),
        ("product-of-negatives", "-2 \\times -9", 18.0),
        ("product-chain", "3 \\cdot 3 \\cdot 2", 18.0),
        ("division", "36 \\div 2", 18.0),
        ("division-by-zero", "1/0", None),
        ("mixed-operations", "2 + 2 \\times 4", None),
        ("two-divisions", "36/2/1", None),
        ("power", "2^3", None),
        ("letter", "x", None),
    ],
    "eq_last": [
        ("name", "x = 18", "18"),
        ("function-name", "f(x) = 18", "18"),
        ("holds", "9 \\times 2 = 18", "18"),
        ("sum", "10 + 8 = 18", "18"),
        ("chain", "x = 9 \\cdot 2 = 18", "18"),
        ("false", "9 \\times 3 = 18", None),
        ("mixed-operations", "2 + 2 \\times 4 = 10", None),  # not evaluated: proves nothing
        ("word", "total = 18", None),
        ("two-values", "x = 18 = 19", None),
        ("command-side", "\\sqrt{13} = 18", None),
    ],
    "form_refused": [
        ("words", "She makes 18 dollars", "words inside the marker"),
        ("word-in-text", "\\text{eighteen}", "words inside the marker"),
        ("false-equation", "9 \\times 3 = 18", "an equation whose earlier sides do not give its last side"),
        ("list", "17; -18", "several values inside the marker"),
        ("plus-minus", "18 \\pm 1", "several values inside the marker"),
        ("approx", "18 \\approx 19", "several values inside the marker"),
        ("operator", "9 * 2", "an expression to evaluate, not a value"),
        ("command", "\\frac{36}{2}", "an expression to evaluate, not a value"),
        ("factorial", "3!", "an expression to evaluate, not a value"),
        ("one-letter", "x", "not a value the contract reads"),
    ],
    "think_answer_ok": [
        ("both", "<think>a</think><answer>18</answer>", True),
        ("whitespace-around", "\n<think>\na\n</think>\n\n<answer>18</answer>\n", True),
        ("empty-tags", "<think></think><answer></answer>", True),
        ("text-between", "<think>a</think>x<answer>18</answer>", False),
        ("text-after", "<think>a</think><answer>18</answer> done", False),
        ("no-think", "<answer>18</answer>", False),
        ("answer-first", "<answer>18</answer><think>a</think>", False),
        ("two-thinks", "<think>a</think><think>b</think><answer>18</answer>", False),
        ("two-answers", "<think>a</think><answer>1</answer><answer>2</answer>", False),
    ],
}


@pytest.mark.parametrize(("macro", "args", "want"), macro_cases(MACROS))
def test_marker_macro(macro: str, args: tuple, want: object) -> None:
    assert call_macro(macro, args, CALLS) == want


@pytest.mark.parametrize("text", [c[1] for c in MARK_NORM], ids=[c[0] for c in MARK_NORM])
def test_mark_norm_is_norm_answer(text: str) -> None:
    assert call_macro("mark_norm", (text,)) == call_macro("norm_answer", (text,))
