"""Propositional logic for the logic verifier: parse, canonicalise, decide by truth table, and read
a true/false/unknown verdict. Responses are untrusted text, so nothing here evaluates them as Python.

    formula.py   the parser: spellings, precedence, bounds on hostile input, the canonical text
    tables.py    bit-parallel truth tables: entails, decide, check_conclusion, eliminated
    verdicts.py  true / false / unknown from an answer's text (shared with the verify SQL)

The names below are the verifier's public API, imported from here (rlvr.verify.tiers,
rlvr.verify.scoring, the logic data generator):

    from rlvr.verify.logic import check_conclusion
    check_conclusion(["P -> Q", "P"], "Q")   # (True, "correct: 'Q' follows from the premises")

Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q
"""

from rlvr.verify.logic.formula import MAX_CHARS, MAX_HEIGHT, MAX_VARIABLES, Formula, canonical, height, parse, to_text, variables
from rlvr.verify.logic.tables import check_conclusion, decide, eliminated, entails, equivalent, is_tautology
from rlvr.verify.logic.verdicts import (
    VERDICT_APOSTROPHES,
    VERDICT_DENIED,
    VERDICT_FONT,
    VERDICT_LEAD,
    VERDICT_PAIRS,
    VERDICT_SENTENCES,
    VERDICT_STRIP,
    normalise_verdict,
)

__all__ = [
    "MAX_CHARS",
    "MAX_HEIGHT",
    "MAX_VARIABLES",
    "VERDICT_APOSTROPHES",
    "VERDICT_DENIED",
    "VERDICT_FONT",
    "VERDICT_LEAD",
    "VERDICT_PAIRS",
    "VERDICT_SENTENCES",
    "VERDICT_STRIP",
    "Formula",
    "canonical",
    "check_conclusion",
    "decide",
    "eliminated",
    "entails",
    "equivalent",
    "height",
    "is_tautology",
    "normalise_verdict",
    "parse",
    "to_text",
    "variables",
]
