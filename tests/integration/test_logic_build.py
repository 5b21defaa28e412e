"""The shipped logic set rebuilds byte for byte: rlvr.data.generators.logic run again gives
data/logic.jsonl (needs reasoning-gym==0.1.25, the `data` extra; skipped without it; tens of
seconds). rlvr.verify.logic on hand cases: tests/unit/verify/test_logic.py."""

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
