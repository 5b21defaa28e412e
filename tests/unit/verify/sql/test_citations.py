"""The retrieval citation macros (rlvr/verify/sql/citations.sql), each called directly by one table:
text -> the value the macro returns; the case names are the test ids. The expected values follow each
macro's comment in the .sql file, its contract.

    .venv/bin/python -m pytest -q tests/unit/verify/sql/test_citations.py
"""

from __future__ import annotations

import pytest

from tests.helpers.sql_macros import call_macro, macro_cases

END, STOP = chr(30), chr(31)  # the marks of a sentence end and of a full stop that ends nothing

MACROS = {
    "norm_ws": [
        ("lower-and-spaces", "  Hello   World ", "hello world"),
        ("tab-and-newline", "a\tb\nc", "a b c"),
        ("no-break-space", "a\u00a0b", "a b"),
        ("unicode-spaces-trimmed", "A\u2003B\u3000", "a b"),
        ("curly-apostrophe", "don’t", "don't"),
        ("curly-quotes", "“A” ‘b’", "\"a\" 'b'"),
        ("guillemets", "«Oui»", '"oui"'),
        ("other-look-alikes-kept", "`a´ b′", "`a´ b′"),
    ],
    "cite_words": [
        ("words", "The year 1829.", " The year 1829 "),
        ("separators", "2.29, 2:29 and 1/29", " 2.29 2:29 and 1/29 "),
        ("thousands-comma", "29,500 men", " 29,500 men "),
        ("grouped-with-spaces", "29 500 people", " 29500 people "),
        ("sign", "-29", " -29 "),
        ("unicode-minus", "x −29", " x -29 "),
        ("hyphen-after-word", "a-29", " a 29 "),
        ("apostrophe", "don't", " don t "),
    ],
    "cite_abbrev": [
        ("title", "Dr. Smith", f"Dr{STOP} Smith"),
        ("initial", "J. Smith", f"J{STOP} Smith"),
        ("any-case", "see Fig. 3", f"see Fig{STOP} 3"),
        ("two-in-a-row-once", "e.g. this", f"e{STOP}g. this"),
        ("not-an-abbreviation", "The end. Next", "The end. Next"),
        ("inside-a-word", "Hydr. x", "Hydr. x"),
    ],
    "cite_opens": [
        ("opening-word", "x. The y", f"x.{END} The y"),
        ("after-an-initial", "Route B. It rained", f"Route B.{END} It rained"),
        ("comma-after", "x. But, y", f"x.{END} But, y"),
        ("newline", "x.\nIt is", f"x.{END}\nIt is"),
        ("longer-word", "x. Theory", "x. Theory"),
        ("lower-case", "x. the y", "x. the y"),
        ("no-space-before", "x.The y", "x.The y"),
        ("name", "x. Smith y", "x. Smith y"),
    ],
    "cite_sentences": [
        ("abbreviation", "Dr. Smith came. He left.", ["dr. smith came.", "he left."]),
        ("two-abbreviations", "See e.g. Smith. Next.", ["see e.g. smith.", "next."]),
        ("initial-then-opening-word", "Route B. It rained.", ["route b.", "it rained."]),
        ("lower-case-after", "It ends. then more.", ["it ends. then more."]),
        ("closing-quote", 'He said "Stop!" Then left.', ['he said "stop!"', "then left."]),
        ("cjk", "他来了。她走了。", ["他来了。", "她走了。"]),
        ("blank-line-and-lower-case", "line one\nand more\n\nnext", ["line one and more", "next"]),
        ("line-break", "Line one\nLine two", ["line one", "line two"]),
    ],
    "cite_needle": [
        ("straight-quotes", '"It rained."', "it rained."),
        ("curly-quotes", "“It rained”", "it rained"),
        ("single-quotes", "  ‘Hello’ ", "hello"),
        ("guillemets", "«Oui»", "oui"),
        ("apostrophe-inside", "don't", "don't"),
        ("spaces", "A  B", "a b"),
        ("only-quotes", '""', ""),
    ],
    "cite_trim": [
        ("quoted-sentence", '"It rained."', "It rained"),
        ("parentheses", "(see above)", "see above"),
        ("cjk-brackets", "「你好」", "你好"),
        ("question", "Why?", "Why"),
        ("inner-stop-kept", "Mr. X.", "Mr. X"),
        ("nothing-to-trim", "x", "x"),
        ("only-marks", "...", ""),
    ],
}


@pytest.mark.parametrize(("macro", "args", "want"), macro_cases(MACROS))
def test_citation_macro(macro: str, args: tuple, want: object) -> None:
    assert call_macro(macro, args) == want
