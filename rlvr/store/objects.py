"""The commit protocol on a store without rename (object storage; rlvr.store.commit dispatches here).

A local stage renames its finished temporary folder into place; S3 has no rename. Instead:

1. Every output file is uploaded under a key unique to the attempt: the output folder's name, `@`,
   the attempt id, then the file's path inside the folder:
   `rollouts/iteration=000003@5f0c9a2e71d4/part-000000.parquet`, `policy/v000004@5f0c.../model.safetensors`.
   No two attempts (a rerun, a second writer) ever write one key.
2. The commit record, which lists every file with its path (the same as in a local run), key, size,
   sha256 and ETag, is created with a conditional write, create-only (`If-None-Match: *`). That
   one request is the commit point: of two writers racing for one stage exactly one creates it, the
   other gets Conflict and commits nothing (its uploads are deleted).
3. Readers see only files that a record lists, at the key it lists, with the ETag it lists (every
   write of an object gives it a new ETag, so a rewritten or damaged object is found by a listing;
   its bytes are checked against the sha256 when they are downloaded, rlvr.store.workspace).
4. After the commit, objects under the same output folders that the new record does not list are
   deleted: the earlier attempts' (a killed one, a stale record's). Each output folder belongs to one
   stage, so no other record can list them.

A kill between 1 and 2 leaves objects that no record lists: orphans. The rerun of that stage
deletes them (4); `rlvr verify-store` reports the ones left (a stage never rerun), and
`rlvr verify-store RUN --remove-orphans` deletes them under the writer lease.

Tests: tests/integration/test_store_s3.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from rlvr.store.fs import Obj
from rlvr.store.lease import LEASE_KEY
from rlvr.store.workspace import Workspace, is_meta


def new_attempt() -> str:
    return uuid.uuid4().hex[:12]


def attempt_key(folder: str, attempt: str, inner: str) -> str:
    """The key of one output file of one attempt: 'rollouts/iteration=000003@<attempt>/part-000000.parquet'."""
    return f"{folder}@{attempt}/{inner}"


def upload(ws: Workspace, files: list[tuple[Path, str]], on_first: Callable[[], None] = lambda: None) -> dict[str, Obj]:
    """Upload (local file, key) pairs; returns key -> size and ETag. `on_first` runs after the first
    upload (a crash test's fault point: a kill in the middle of an attempt's uploads)."""
    out = {}
    for k, (src, key) in enumerate(files):
        out[key] = ws.store.upload(src, key)
        with ws.lock:
            ws.listing[key] = out[key]
        if k == 0:
            on_first()
    return out


def sweep(ws: Workspace, folders: Iterable[str], keep: set[str]) -> list[str]:
    """Delete the objects of earlier attempts at these output folders (keys `folder@...`) that are not
    in `keep` (the new record's keys); returns the deleted keys."""
    prefixes = tuple(f"{f}@" for f in folders)
    with ws.lock:
        old = sorted(k for k in ws.listing if k.startswith(prefixes) and k not in keep)
    ws.remove(old)
    return old


def listed_problems(ws: Workspace, outputs: list, pruned: Callable[[], frozenset[str]]) -> list[tuple[str, str]]:
    """(path, what is wrong) for each record output whose object is missing (and not pruned on purpose),
    or whose size or ETag is not the record's: the listing check, no byte downloaded."""
    problems = []
    for o in outputs:
        obj = ws.listing.get(o.key or o.path)
        if obj is None:
            if o.path not in pruned():
                problems.append((o.path, "missing"))
        elif obj.size != o.bytes:
            problems.append((o.path, f"{obj.size} bytes, its record says {o.bytes}"))
        elif o.etag and obj.etag != o.etag:
            problems.append((o.path, "rewritten since its commit (its ETag differs from the record's)"))
    return problems


def orphans(ws: Workspace, listed: set[str]) -> list[str]:
    """Keys under the run's prefix that are neither metadata, the lease, nor listed by a record."""
    with ws.lock:
        return sorted(k for k in ws.listing if k not in listed and k != LEASE_KEY and not is_meta(k))
