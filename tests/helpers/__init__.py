"""Helpers that several test files share (imported as `tests.helpers.<module>`); fixtures stay in
tests/conftest.py. ROOT is the repository; DATA is tests/data/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
