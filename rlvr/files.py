"""Digests: the sha256 of a file and of JSON data, the one implementation every module uses, and
the fingerprint of rlvr's own code (a driver and its workers must run the same rlvr).

`cached_sha256` hashes each file once per process: a (path, size, mtime_ns) -> sha256 cache, which
the run store primes when it commits a file it has just hashed (rlvr.store.commit)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
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


CODE_PACKAGES = ("rlvr", "rlvr.tasks", "rlvr.flows", "rlvr.data")  # where rlvr's code and shipped data live
CODE_SUFFIXES = (".py", ".sql", ".jsonl")  # what a stage's bytes can depend on; caches and .pyc are not


def code_digest(roots: dict[str, Path]) -> str:
    """A digest of the code under `roots` (a package name -> its folder): each file's path as a module
    path (`rlvr/tasks/placed.py`) and its sha256. A file seen from two roots counts once, so an installed
    wheel (rlvr/tasks inside rlvr/) and a source checkout (tasks/ beside rlvr/) give the same digest."""
    files: dict[str, str] = {}
    for name, root in roots.items():
        prefix = name.replace(".", "/")
        for path in root.rglob("*"):
            if path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts and path.is_file():
                files[f"{prefix}/{path.relative_to(root).as_posix()}"] = file_sha256(path)
    return json_digest(files)


def code_roots() -> dict[str, Path]:
    """Where this process imports each of CODE_PACKAGES from (a package name -> its folder)."""
    roots = {}
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots[name] = Path(next(iter(spec.submodule_search_locations)))
    return roots


@functools.cache
def code_fingerprint() -> str:
    """The digest of the rlvr this process runs (code_digest over code_roots()), taken once."""
    return code_digest(code_roots())
