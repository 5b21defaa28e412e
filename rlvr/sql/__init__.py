"""SQL that rlvr runs, one statement per .sql file; `load(name)` reads one. Values are bound
with $name parameters, never formatted into the text."""

from importlib.resources import files


def load(name: str) -> str:
    return (files(__package__) / f"{name}.sql").read_text()
