"""The doctests of the verifier package (rlvr/verify/**) run: each module's examples are tests too.

Run: .venv/bin/python -m pytest -q tests/unit/verify/test_doctests.py   (well under a second)
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rlvr.verify

MODULES = sorted(m.name for m in pkgutil.walk_packages(rlvr.verify.__path__, "rlvr.verify."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests of {name} failed"


def test_the_verifier_has_doctests() -> None:
    found = sum(len(doctest.DocTestFinder().find(importlib.import_module(n))) for n in MODULES)
    assert found >= 5
