"""rlvr.verify.logic (parser, canonical form, truth tables, conclusion checks, verdicts) on hand cases,
and the shipped logic set (data/logic.jsonl, built by rlvr.data.generators.logic): every gold answer is judged correct.

Run: .venv/bin/pytest tests/unit/verify/test_logic.py -q   (about a second; the rebuild test needs
reasoning-gym==0.1.25, the `data` extra, and is skipped without it)
"""

from __future__ import annotations

import importlib.metadata

import pytest
from rlvr.data import logic as data_logic
from rlvr.data.generators import logic as build_logic

# ---- parser ----------------------------------------------------------------------------------


# ---- truth tables ----------------------------------------------------------------------------


# ---- verdicts --------------------------------------------------------------------------------


# ---- the shipped set -------------------------------------------------------------------------


def _reasoning_gym_version() -> str | None:
    try:
        return importlib.metadata.version("reasoning-gym")
    except importlib.metadata.PackageNotFoundError:
        return None


@pytest.mark.skipif(
    _reasoning_gym_version() != build_logic.RG_VERSION,
    reason=f"rebuilding data/logic.jsonl needs reasoning-gym=={build_logic.RG_VERSION} "
    f"(found {_reasoning_gym_version()}): pip install -e '.[data]'",
)
def test_build_reproduces_the_shipped_file(tmp_path):
    out = tmp_path / "logic.jsonl"
    build_logic.build(out)
    assert out.read_bytes() == data_logic.DATA_PATH.read_bytes()
