"""Per-sample seeds: one function, so that every engine draws sample k of a prompt with the same seed."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, iteration: int, prompt_id: str, sample_idx: int) -> int:
    """A 63-bit seed that depends on exactly these four things (STYLE rule 7)."""
    h = hashlib.sha256(f"{seed}/{iteration}/{prompt_id}/{sample_idx}".encode()).digest()
    return int.from_bytes(h[:8], "little") & ((1 << 63) - 1)
