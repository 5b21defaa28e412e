"""The house's size rule: no file over 500 lines and no function over 60 in the library (rlvr/, flows/,
tasks/, data/). A file that grows past it is split by role; a function, into named steps."""

from __future__ import annotations

import ast

from tests.helpers import ROOT

FOLDERS = ("rlvr", "flows", "tasks", "data")
MAX_FILE, MAX_FUNCTION = 500, 60


def _sources():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_no_file_over_500_lines() -> None:
    long = {str(f.relative_to(ROOT)): n for f in _sources() if (n := len(f.read_text().splitlines())) > MAX_FILE}
    assert long == {}


def test_no_function_over_60_lines() -> None:
    long = {}
    for f in _sources():
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION:
                long[f"{f.relative_to(ROOT)}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    assert long == {}
