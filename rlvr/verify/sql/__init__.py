"""The SQL tier of verification: the statements the verify stage runs (answer extraction,
normalisation, exact and numeric decisions, citations, reward composition and group advantages),
one statement per .sql file; `load(name)` reads one. Values are bound with $name parameters,
never formatted into the text.

It decides what SQL can decide exactly (numbers, strings, verdicts, citation spans); rows it
cannot decide go to a Python tier (math, code, logic), never to a guess.

The answer is what the response marks (the answer contract, README "The answer contract"): the
markers and the forms a marker may hold are markers.sql's, read by verify_markers.sql; nothing outside a
marker is read, so words around a marker neither deny nor hedge it (tests/data/paid-by-contract.json),
and a right answer in a form the contract does not list is refused (tests/data/refused-by-contract.json).
The macro files: normalise.sql (comparable text and exact values), symbolic.sql (a symbolic answer in the
gold's form), markers.sql (the contract), citations.sql (retrieval). For symbolic golds the checks before
math-verify are heuristics over the text, so a policy can still find an equal expression they miss.
Tests: tests/unit/verify/test_contract.py (one table per rule), tests/unit/verify/sql/ (one table per macro,
a file per macro file), tests/unit/verify/test_verify*.py, tests/integration/test_redteam.py (the
corpus)."""

from importlib.resources import files


def load(name: str) -> str:
    return (files(__package__) / f"{name}.sql").read_text()
