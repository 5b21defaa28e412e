"""Digests: the sha256 of a file and of JSON data, the one implementation every module uses.

`cached_sha256` hashes each file once per process: a (path, size, mtime_ns) -> sha256 cache, which
the run store primes when it commits a file it has just hashed (rlvr.store.commit)."""

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


HASHES: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256: each file hashed once per process


def cached_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in HASHES:
        HASHES[key] = file_sha256(path)
    return HASHES[key]


def remember_sha256(path: Path, sha256: str) -> None:
    """Prime the cache with a digest just taken of `path` (its size and mtime as they are now)."""
    st = path.stat()
    HASHES[(str(path), st.st_size, st.st_mtime_ns)] = sha256
