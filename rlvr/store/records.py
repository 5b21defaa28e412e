"""Commit records and how they are read: the record models (CommitRecord, OutputFile, PruneRecord),
reading one (`read_record`: CorruptRecordError when it does not parse), and checking the files it
lists (`verified_record`: sizes and sha256, IntegrityError naming the stage to redo). Every reader
of committed files goes through here; rlvr.store.commit writes them.

Tests: tests/unit/store/test_store.py, tests/integration/test_integrity.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, PrivateAttr, ValidationError, model_serializer

from rlvr.errors import RlvrError
from rlvr.files import cached_sha256, file_sha256, json_digest, text_sha256
from rlvr.schema import RunPaths, iteration_of
from rlvr.store import objects
from rlvr.store.workspace import Workspace, workspace_at, workspace_of


class StoreError(RlvrError, RuntimeError):
    """The run store does not hold what its commit records say; the message says what to redo."""


class CorruptRecordError(StoreError):
    """A commit record that is not valid JSON of the record schema (truncated, edited)."""


class IntegrityError(StoreError):
    """Committed files that are missing or differ from the sizes and sha256 of their record."""


class OutputFile(BaseModel):
    path: str  # relative to the run root
    bytes: int
    sha256: str
    rows: int | None = None  # Parquet files only
    # a run on object storage (rlvr.store.objects): the object's key, unique to the attempt, and its
    # ETag at commit; absent from a local run's records, whose files are at `path`
    key: str | None = None
    etag: str | None = None

    @model_serializer(mode="wrap")
    def _local_records_unchanged(self, handler):
        data = handler(self)
        for name in ("key", "etag"):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class CommitRecord(BaseModel):
    stage: str
    iteration: int | None
    fingerprint: str  # hash of `inputs`; a record whose fingerprint differs is stale
    inputs: dict[str, Any]
    outputs: list[OutputFile]
    rows: int
    seconds: float
    created_at: str
    extra: dict[str, Any] = {}
    # the `rlvr worker` that made the stage (host, name, pid), when a placed stage ran on one ([placement]);
    # absent from a stage the driver ran, as from records written before workers existed. Like seconds and
    # created_at it changes nothing downstream: neither the fingerprint nor digest() reads it
    worker: dict[str, Any] | None = None
    # a run on object storage: brings listed files into the working copy, checked (rlvr.store.workspace)
    _fetch: Callable[[list[OutputFile]], None] | None = PrivateAttr(default=None)

    @model_serializer(mode="wrap")
    def _driver_records_unchanged(self, handler):
        data = handler(self)
        if data.get("worker") is None:
            data.pop("worker", None)
        return data

    def digest(self) -> str:
        """What downstream stages depend on: the exact bytes this stage produced."""
        return text_sha256("".join(o.sha256 for o in self.outputs))[:16]

    def parquet_files(self, root: Path, inside: str = "") -> list[Path]:
        """The record's Parquet files under `root` (those in folder `inside` of the run only, when
        given: one part's); on object storage downloaded first (once per machine, into the
        sha256-keyed cache) and checked against the record (IntegrityError if not)."""
        prefix = f"{inside.rstrip('/')}/" if inside else ""
        files = [o for o in self.outputs if o.path.endswith(".parquet") and o.path.startswith(prefix)]
        if self._fetch is not None:
            self._fetch(files)
        return [root / o.path for o in files]


class PruneRecord(BaseModel):
    """Files of one policy version that checkpoint retention deleted on purpose (rlvr.store.retention).
    Written before the files are removed, so a missing file is always either listed here or lost."""

    version: int
    weights: bool  # True: the whole version folder; False: only its trainer state
    files: list[str]  # relative to the run root
    created_at: str


def read_pruned(paths: RunPaths) -> dict[int, PruneRecord]:
    """version -> what retention deleted of it."""
    out = {}
    for f in sorted(paths.pruned_dir.glob("v*.json")) if paths.pruned_dir.is_dir() else []:
        rec = PruneRecord.model_validate_json(f.read_text())
        out[rec.version] = rec
    return out


def output_file(f: Path, rel: Path) -> OutputFile:
    """A record's entry for file `f`, which readers find at `rel` (relative to the root)."""
    n = pq.ParquetFile(f).metadata.num_rows if f.suffix == ".parquet" else None
    return OutputFile(path=str(rel), bytes=f.stat().st_size, sha256=file_sha256(f), rows=n)


def fingerprint(inputs: dict[str, Any]) -> str:
    return json_digest(inputs)


def redo_spec(stage: str, iteration: int | None) -> str:
    """The argument of `rlvr resume DIR --redo ...` that recomputes this stage: 'rollout:3', 'prepare'."""
    return stage if iteration is None else f"{stage}:{iteration}"


def _record_key(path: Path) -> tuple[Path, str, int | None]:
    """(run root, stage, iteration) of a commit record's path (see RunPaths.record)."""
    if (iteration := iteration_of(path.parent)) is not None:
        return path.parents[2], path.stem, iteration
    return path.parents[1], path.stem, None


def read_record(path: Path) -> CommitRecord | None:
    """The commit record at `path`, None if there is none; CorruptRecordError if it does not parse."""
    if not path.is_file():
        return None
    ws = workspace_at(path)
    try:
        rec = CommitRecord.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as err:
        root, stage, iteration = _record_key(path)
        where = path if ws is None else f"{ws.uri}/{path.relative_to(ws.root)}"
        why = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err).splitlines()[0]
        raise CorruptRecordError(
            f"commit record {where} is corrupt (truncated or edited: {why}); recompute its stage with "
            f"`rlvr resume {root if ws is None else ws.uri} --redo {redo_spec(stage, iteration)}`"
        ) from None
    if ws is not None:
        rec._fetch = _fetcher(ws, rec)
    return rec


def _fetcher(ws: Workspace, rec: CommitRecord) -> Callable[[list[OutputFile]], None]:
    """How a record of a run on object storage brings its files into the working copy, checked."""

    def fetch(files: list[OutputFile]) -> None:
        if problems := ws.fetch(files):
            raise integrity_error(rec, ws.uri, problems)

    return fetch


def pruned_files(paths: RunPaths) -> frozenset[str]:
    """Files that checkpoint retention deleted on purpose (listed by prune records before deletion)."""
    return frozenset(f for p in read_pruned(paths).values() for f in p.files)


def output_problems(rec: CommitRecord, paths: RunPaths) -> list[tuple[str, str]]:
    """(path, what is wrong) for each of the record's files that is missing (and not pruned by
    retention) or differs from the size and sha256 the record lists. On object storage: the listing's
    sizes and ETags (rlvr.store.objects); the bytes are checked against sha256 when fetched."""
    if (ws := workspace_of(paths)) is not None:
        return objects.listed_problems(ws, rec.outputs, lambda: pruned_files(paths))
    problems = []
    pruned = None
    for o in rec.outputs:
        f = paths.root / o.path
        if not f.is_file():
            pruned = pruned_files(paths) if pruned is None else pruned
            if o.path not in pruned:
                problems.append((o.path, "missing"))
        elif (size := f.stat().st_size) != o.bytes:
            problems.append((o.path, f"{size} bytes, its record says {o.bytes}"))
        elif cached_sha256(f) != o.sha256:
            problems.append((o.path, "sha256 differs from its record"))
    return problems


def integrity_error(rec: CommitRecord, root: str | Path, problems: list[tuple[str, str]]) -> IntegrityError:
    where = "" if rec.iteration is None else f" of iteration {rec.iteration}"
    files = "; ".join(f"{p} ({what})" for p, what in problems[:5]) + (
        f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
    )
    return IntegrityError(
        f"committed {rec.stage}{where} no longer matches its commit record: {files}; "
        f"recompute it with `rlvr resume {root} --redo {redo_spec(rec.stage, rec.iteration)}`"
    )


def verified_record(paths: RunPaths, stage: str, iteration: int | None) -> CommitRecord | None:
    """The stage's record, after checking its files (IntegrityError if any differs); None if uncommitted."""
    rec = read_record(paths.record(stage, iteration))
    if rec is not None and (problems := output_problems(rec, paths)):
        raise integrity_error(rec, paths.location, problems)
    return rec
