"""The SQL tier of verification: the statements the verify stage runs (answer extraction,
normalisation, exact and numeric decisions, citations, reward composition and group advantages),
one statement per .sql file; `load(name)` reads one. Values are bound with $name parameters,
never formatted into the text.

It decides what SQL can decide exactly (numbers, strings, verdicts, citation spans); rows it
cannot decide go to a Python tier (math, code, logic), never to a guess."""

from importlib.resources import files


def load(name: str) -> str:
    return (files(__package__) / f"{name}.sql").read_text()
