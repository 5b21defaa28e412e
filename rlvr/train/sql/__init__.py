"""The update stage's SQL (the training batch and its group statistics), one statement per .sql
file; `load(name)` reads one. Values are bound with $name parameters, never formatted into the
text. The verifier's SQL lives with its tier, in rlvr/verify/sql/."""

from importlib.resources import files


def load(name: str) -> str:
    return (files(__package__) / f"{name}.sql").read_text()
