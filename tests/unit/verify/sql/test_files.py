"""The SQL files as a whole (rlvr/verify/sql/): every macro they define has its own table in this folder, and no
line is over 160 characters (a rule read on one screen). verify_rewards, a TEMP table macro, is a step of the
pass, not a rule: tests/unit/verify/test_verify.py reads it through the pass.

    .venv/bin/python -m pytest -q tests/unit/verify/sql/test_files.py
"""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from tests.unit.verify.sql import test_citations, test_markers, test_normalise, test_symbolic

SQL = sorted(p for p in files("rlvr.verify.sql").iterdir() if p.name.endswith(".sql"))
TABLED = set(test_citations.MACROS) | set(test_markers.MACROS) | set(test_normalise.MACROS) | set(test_symbolic.MACROS)


@pytest.mark.parametrize("path", SQL, ids=[p.name for p in SQL])
def test_every_macro_has_a_table(path) -> None:
    defined = re.findall(r"CREATE OR REPLACE MACRO (\w+)", path.read_text())
    assert [m for m in defined if m not in TABLED] == []


@pytest.mark.parametrize("path", SQL, ids=[p.name for p in SQL])
def test_no_line_is_over_160_characters(path) -> None:
    lines = path.read_text().splitlines()
    assert [k for k, line in enumerate(lines, 1) if len(line) > 160] == []
