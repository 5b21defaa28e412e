"""The run store's write protocol: atomic outputs, commit records, skip-on-resume.

A stage writes every output into a hidden temporary folder (`.tmp-<name>-<uuid>`), renames it
into place when complete, and writes its commit record last (itself via temp file + rename).
Readers (`rlvr sql`, the next stage) only trust outputs listed by a commit record, so a stage
killed at any point leaves nothing a reader sees and nothing a rerun must clean by hand: the
rerun drops the stale temporaries and any uncommitted output before it starts.

    with begin_stage(paths, "rollout", 3, inputs) as tx:       # skipped if already committed
        out = tx.output(paths.table_dir("rollouts", 3))          # a temp folder to fill
        write_table(rows, ROLLOUTS, out / shard_name(0))
        tx.commit(rows=len(rows))

On object storage there is no rename: `StageTx.commit` uploads under attempt-unique keys and
creates the record create-only instead (rlvr.store.objects; the working copy and its sha256 cache:
rlvr.store.workspace). Records, readers and the skip-on-resume rule are the same.

Integrity: every reader goes through `verified_record` (or `committed`), which checks the
record's files against the sizes and sha256 it lists, hashing each file once per process (a
(path, size, mtime_ns) -> sha256 cache), and raises IntegrityError naming the files and the stage
to redo. A record that does not parse raises CorruptRecordError, never a pydantic traceback.

Outside a run (`rlvr eval --out`, `rlvr export --out`) the same two rules hold: `new_folder` writes a
folder whole or not at all (a temporary sibling renamed into place; an existing non-empty folder is
refused), and `write_folder_record` / `verified_folder_record` give it a record of its files.

Tests: tests/test_store.py, tests/test_integrity.py.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, PrivateAttr, ValidationError, model_serializer

from rlvr.errors import DiskSpaceError, RlvrError
from rlvr.files import cached_sha256, file_sha256, json_digest, remember_sha256, text_sha256
from rlvr.schema import PARQUET_COMPRESSION, PREPARE, TMP_PREFIX, UPDATE, RunPaths, iteration_of
from rlvr.store import objects
from rlvr.store.fs import Conflict
from rlvr.store.lease import check_lease
from rlvr.store.workspace import Workspace, workspace_at, workspace_of

FAULT_ENV = "RLVR_FAULT_AT"
_MADE_BY: ContextVar[dict[str, Any] | None] = ContextVar("rlvr_made_by", default=None)


@contextmanager
def made_by(worker: dict[str, Any]) -> Iterator[None]:
    """Stages committed inside the block name `worker` (host, name, pid) in their records (`rlvr worker`)."""
    token = _MADE_BY.set(worker)
    try:
        yield
    finally:
        _MADE_BY.reset(token)


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

    def parquet_files(self, root: Path) -> list[Path]:
        """The record's Parquet files under `root`; on object storage downloaded first (once per
        machine, into the sha256-keyed cache) and checked against the record (IntegrityError if not)."""
        files = [o for o in self.outputs if o.path.endswith(".parquet")]
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


def write_table(table: pa.Table | list[dict[str, Any]], schema: pa.Schema, path: Path) -> int:
    """Write rows as one zstd Parquet file with exactly `schema`; returns the row count."""
    if not isinstance(table, pa.Table):
        table = pa.Table.from_pylist(table, schema=schema)
    table = table.select(schema.names).cast(schema)
    pq.write_table(table, path, compression=PARQUET_COMPRESSION)
    return table.num_rows


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


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TMP_PREFIX}{path.name}-{uuid.uuid4().hex[:8]}"
    tmp.write_text(text)
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


class FolderExistsError(StoreError):
    """An output folder that already holds files (rlvr never writes into, or over, a user's folder)."""


@contextmanager
def new_folder(final: Path, *, flag: str) -> Iterator[Path]:
    """A folder written whole or not at all, for outputs outside a run (`rlvr eval --out`, `rlvr
    export --out`): refuses a `final` that exists and is not empty (naming `flag`), yields a fresh
    temporary sibling `.tmp-<name>-<uuid>` to fill, and renames it to `final` when the block ends;
    on an error the temporary is removed and `final` is left as it was. A kill leaves only the
    hidden temporary, which the next attempt removes."""
    final = Path(final).absolute()
    check_new_folder(final, flag=flag)
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in _stale_temporaries(final):
        _remove(stale)
    tmp = final.parent / f"{TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        check_new_folder(final, flag=flag)  # someone may have filled it meanwhile
        os.replace(tmp, final)  # rename(2) replaces an empty directory, never a full one
    except BaseException:
        _remove(tmp)
        raise


def check_new_folder(final: Path, *, flag: str) -> None:
    """FolderExistsError unless `final` is absent or an empty folder."""
    if final.exists() and (not final.is_dir() or any(final.iterdir())):
        what = "a file" if not final.is_dir() else "a folder that is not empty"
        raise FolderExistsError(f"{flag} {final} is {what}; give a new folder (nothing is written into an existing one)")


def write_folder_record(
    folder: Path, filename: str, *, inputs: dict[str, Any], rows: int, seconds: float, extra: dict[str, Any]
) -> CommitRecord:
    """The record of a folder written outside a run (`rlvr eval --out`): folder/<filename>, written
    last, listing every file already in the folder with its size and sha256, as a stage's record does."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    record = CommitRecord(
        stage=Path(filename).stem,
        iteration=None,
        fingerprint=fingerprint(inputs),
        inputs=inputs,
        outputs=[output_file(f, f.relative_to(folder)) for f in files],
        rows=rows,
        seconds=round(seconds, 3),
        created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        extra=extra,
    )
    write_text_atomic(folder / filename, record.model_dump_json(indent=2))
    return record


def verified_folder_record(folder: Path, filename: str, *, redo: str) -> CommitRecord:
    """folder/<filename> after checking the files it lists (sizes and sha256); StoreError naming
    `redo` (how to write the folder again) when the record is corrupt or a file differs."""
    path = folder / filename
    try:
        rec = CommitRecord.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as err:
        raise CorruptRecordError(f"{path} is corrupt (truncated or edited: {str(err).splitlines()[0]}); {redo}") from None
    if problems := output_problems(rec, RunPaths(folder)):
        files = "; ".join(f"{p} ({what})" for p, what in problems[:5])
        raise IntegrityError(f"{folder} no longer matches {path.name}: {files}; {redo}")
    return rec


def put_text(paths: RunPaths, path: Path, text: str, *, create: bool = False) -> None:
    """Write one metadata file of a run (run.toml, a record, a prune record): locally by temp file and
    rename; on object storage to the store (create-only when `create`: rlvr.store.fs.Conflict if it
    exists), then to the working copy."""
    if (ws := workspace_of(paths)) is None:
        write_text_atomic(path, text)
    else:
        ws.put_text(str(path.relative_to(paths.root)), text, create=create)


def remove_record(paths: RunPaths, stage: str, iteration: int | None) -> bool:
    """Delete a stage's commit record (so that it is not committed); True if there was one."""
    path = paths.record(stage, iteration)
    existed = path.is_file()
    if (ws := workspace_of(paths)) is None:
        _remove(path)
    else:
        ws.remove([str(path.relative_to(paths.root))])
    return existed


def fetch_policy(paths: RunPaths, version: int) -> Path:
    """Policy v_version's folder, to read from. On object storage its committed files (all but those
    retention pruned) are brought into the working copy first, through the sha256-keyed cache, so the
    trainer and the engines read local, checked files; a local run's folder is returned as it is."""
    folder = paths.policy_dir(version)
    if paths.uri is None:
        return folder
    rec = read_record(paths.record(PREPARE, None) if version == 0 else paths.record(UPDATE, version - 1))
    if rec is not None and rec._fetch is not None:
        inside, pruned = f"{folder.relative_to(paths.root)}/", pruned_files(paths)
        rec._fetch([o for o in rec.outputs if o.path.startswith(inside) and o.path not in pruned])
    return folder


def maybe_fault(stage: str, iteration: int | None, point: str) -> None:
    """Fault injection for crash tests: RLVR_FAULT_AT='update:1:before_rename' makes this
    process SIGKILL itself there, exactly as an OOM kill or a pulled plug would."""
    want = os.environ.get(FAULT_ENV)
    if want and want == f"{stage}:{iteration}:{point}":
        os.kill(os.getpid(), signal.SIGKILL)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _stale_temporaries(final: Path) -> list[Path]:
    if not final.parent.is_dir():
        return []
    return list(final.parent.glob(f"{TMP_PREFIX}{final.name}-*"))


class StageTx:
    """One attempt at a stage: temp outputs, then rename, then the commit record."""

    def __init__(self, paths: RunPaths, stage: str, iteration: int | None, inputs: dict[str, Any]):
        self.paths, self.stage, self.iteration, self.inputs = paths, stage, iteration, inputs
        self.fingerprint = fingerprint(inputs)
        self._pending: list[tuple[Path, Path]] = []  # (temp, final)
        self.started = time.perf_counter()
        self.record: CommitRecord | None = None

    def output(self, final: Path) -> Path:
        """A fresh temporary folder that becomes `final` on commit."""
        for stale in _stale_temporaries(final):
            _remove(stale)
        tmp = final.parent / f"{TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        self._pending.append((tmp, final))
        return tmp

    def commit(self, *, rows: int, extra: dict[str, Any] | None = None) -> CommitRecord:
        if (ws := workspace_of(self.paths)) is not None:
            return self._commit_to_store(ws, rows, extra)
        maybe_fault(self.stage, self.iteration, "before_rename")
        outputs: list[OutputFile] = []
        for tmp, final in self._pending:
            for f in sorted(p for p in tmp.rglob("*") if p.is_file()):
                outputs.append(output_file(f, final.relative_to(self.paths.root) / f.relative_to(tmp)))
            _remove(final)  # an uncommitted leftover of an earlier, killed attempt
            os.replace(tmp, final)
        for o in outputs:  # the hashes just taken stand for the renamed files (rename keeps mtime)
            remember_sha256(self.paths.root / o.path, o.sha256)
        self._pending.clear()
        maybe_fault(self.stage, self.iteration, "before_record")
        self.record = self._new_record(outputs, rows, extra)
        write_text_atomic(self.paths.record(self.stage, self.iteration), self.record.model_dump_json(indent=2))
        return self.record

    def _new_record(self, outputs: list[OutputFile], rows: int, extra: dict[str, Any] | None) -> CommitRecord:
        return CommitRecord(
            stage=self.stage,
            iteration=self.iteration,
            fingerprint=self.fingerprint,
            inputs=self.inputs,
            outputs=outputs,
            rows=rows,
            seconds=round(time.perf_counter() - self.started, 3),
            created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
            extra=extra or {},
            worker=_MADE_BY.get(),
        )

    def _commit_to_store(self, ws: Workspace, rows: int, extra: dict[str, Any] | None) -> CommitRecord:
        """The protocol without rename (rlvr.store.objects): upload under attempt-unique keys, create the
        record create-only (the commit point), then put the outputs in place in the working copy."""
        maybe_fault(self.stage, self.iteration, "before_rename")  # nothing has left the temporary folders yet
        check_lease(ws.uri)  # a writer that lost its lease uploads nothing (and is checked again before the record)
        attempt, root = objects.new_attempt(), self.paths.root
        files, outputs = [], []
        for tmp, final in self._pending:
            folder = str(final.relative_to(root))
            for f in sorted(p for p in tmp.rglob("*") if p.is_file()):
                inner = str(f.relative_to(tmp))
                n = pq.ParquetFile(f).metadata.num_rows if f.suffix == ".parquet" else None
                key = objects.attempt_key(folder, attempt, inner)
                files.append((f, key))
                outputs.append(
                    OutputFile(path=f"{folder}/{inner}", bytes=f.stat().st_size, sha256=file_sha256(f), rows=n, key=key)
                )
        objs = objects.upload(ws, files, on_first=lambda: maybe_fault(self.stage, self.iteration, "mid_upload"))
        outputs = [o.model_copy(update={"etag": objs[o.key].etag}) for o in outputs]
        maybe_fault(self.stage, self.iteration, "before_record")
        record = self._new_record(outputs, rows, extra)
        check_lease(ws.uri)
        try:
            put_text(self.paths, self.paths.record(self.stage, self.iteration), record.model_dump_json(indent=2), create=True)
        except Conflict:
            ws.remove([key for _, key in files])
            where = "" if self.iteration is None else f" {self.iteration}"
            raise StoreError(
                f"{self.stage}{where} of {ws.uri} was committed by another writer first (its commit record exists); "
                f"nothing of this attempt is kept. One writer per run: `rlvr status {ws.uri}` shows what is committed"
            ) from None
        maybe_fault(self.stage, self.iteration, "after_record")
        for tmp, final in self._pending:
            _remove(final)
            os.replace(tmp, final)
        for o in outputs:
            ws.adopt(root / o.path, o.sha256)
        objects.sweep(ws, [str(final.relative_to(root)) for _, final in self._pending], keep={o.key for o in outputs})
        self._pending.clear()
        self.record = record
        return record

    def abort(self) -> None:
        for tmp, _ in self._pending:
            _remove(tmp)
        self._pending.clear()


def committed(paths: RunPaths, stage: str, iteration: int | None, inputs: dict[str, Any]) -> CommitRecord | None:
    """The stage's record if it is committed for exactly these inputs; IntegrityError if its files
    no longer match the record (resume must not skip, nor silently redo, a damaged stage). Files
    that checkpoint retention pruned on purpose are listed in prune records and do not count."""
    rec = read_record(paths.record(stage, iteration))
    if rec is None or rec.fingerprint != fingerprint(inputs):
        return None
    if problems := output_problems(rec, paths):
        raise integrity_error(rec, paths.location, problems)
    return rec


@contextmanager
def begin_stage(paths: RunPaths, stage: str, iteration: int | None, inputs: dict[str, Any]) -> Iterator[StageTx]:
    """Open a stage attempt. A stale record is removed before any output is touched, so a crash
    from here on can never leave a record that points at half-replaced outputs."""
    remove_record(paths, stage, iteration)
    tx = StageTx(paths, stage, iteration, inputs)
    try:
        yield tx
        if tx.record is None:
            raise RuntimeError(f"stage {stage} (iteration {iteration}) finished without commit()")
    except BaseException as exc:
        free = shutil.disk_usage(paths.root).free  # before abort() frees the half-written outputs
        tx.abort()
        if isinstance(exc, Exception) and not isinstance(exc, DiskSpaceError) and disk_full(exc, free):
            where = stage if iteration is None else f"{stage} {iteration}"
            raise DiskSpaceError(
                f"{where} failed because the disk holding {paths.root} is full ({free:,} bytes free; "
                f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160] if str(exc).strip() else ''}).\n"
                f"Free some space, or keep fewer checkpoints ([checkpoint] keep_last, keep_every), then `rlvr resume {paths.root}`"
            ) from exc
        raise


FULL_DISK_BYTES = 16 << 20  # a stage that fails with less than this free most likely failed for want of space


def disk_full(exc: BaseException, free: int) -> bool:
    """Did `exc` come from a full disk? ENOSPC/EDQUOT anywhere in its chain; or, as torch.save
    reports a full disk only as "unexpected pos N vs M", any failure with the disk all but full."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return free < FULL_DISK_BYTES


@dataclass(frozen=True)
class Outcome:
    """What a stage body hands the protocol to commit: its row count and the record's extra fields."""

    rows: int
    extra: dict[str, Any]


def run_stage(
    paths: RunPaths, stage: str, iteration: int | None, inputs: dict[str, Any], body: Callable[[StageTx], Outcome]
) -> tuple[CommitRecord, bool]:
    """The stage protocol, in one place: fingerprint the inputs -> skip if a matching record is
    committed -> `body(tx)` writes into temporary outputs (tx.output) -> rename -> commit record
    last. Returns (record, skipped). A body that raises leaves nothing behind (begin_stage)."""
    if rec := committed(paths, stage, iteration, inputs):
        return rec, True
    with begin_stage(paths, stage, iteration, inputs) as tx:
        done = body(tx)
        rec = tx.commit(rows=done.rows, extra=done.extra)
    return rec, False
