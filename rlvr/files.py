"""Digests: the sha256 of a file and of JSON data, the one implementation every module uses."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def json_digest(data: Any, length: int = 16) -> str:
    """A short digest of JSON data, independent of key order (fingerprints, config hashes, cache keys)."""
    return text_sha256(json.dumps(data, sort_keys=True))[:length]
