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

Integrity: every reader goes through `verified_record` (rlvr.store.records) or `committed`, which checks the
record's files against the sizes and sha256 it lists, hashing each file once per process (a
(path, size, mtime_ns) -> sha256 cache), and raises IntegrityError naming the files and the stage
to redo. A record that does not parse raises CorruptRecordError, never a pydantic traceback.

Records and their reading are rlvr.store.records; files and folders written whole or not at all
(also outside a run: `rlvr eval --out`, `rlvr export --out`) are rlvr.store.folders.

Tests: tests/unit/store/test_store.py, tests/integration/test_integrity.py.
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

from rlvr.errors import DiskSpaceError
from rlvr.files import file_sha256, remember_sha256
from rlvr.schema import BASE_REF, PARQUET_COMPRESSION, PREPARE, TMP_PREFIX, TRAINER_STATE, UPDATE, RunPaths
from rlvr.store import objects
from rlvr.store.folders import remove_path, stale_temporaries, write_text_atomic
from rlvr.store.fs import Conflict
from rlvr.store.lease import check_lease
from rlvr.store.records import (
    CommitRecord,
    OutputFile,
    StoreError,
    fingerprint,
    integrity_error,
    output_file,
    output_problems,
    pruned_files,
    read_record,
)
from rlvr.store.workspace import Workspace, workspace_of

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


def write_table(table: pa.Table | list[dict[str, Any]], schema: pa.Schema, path: Path) -> int:
    """Write rows as one zstd Parquet file with exactly `schema`; returns the row count."""
    if not isinstance(table, pa.Table):
        table = pa.Table.from_pylist(table, schema=schema)
    table = table.select(schema.names).cast(schema)
    pq.write_table(table, path, compression=PARQUET_COMPRESSION)
    return table.num_rows


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
        remove_path(path)
    else:
        ws.remove([str(path.relative_to(paths.root))])
    return existed


def fetch_policy(paths: RunPaths, version: int, *, trainer_state: bool = False) -> Path:
    """Policy v_version's folder, to read from. On object storage its committed files (all but those
    retention pruned) are brought into the working copy first, through the sha256-keyed cache, so the
    trainer and the engines read local, checked files; a local run's folder is returned as it is.
    TRAINER_STATE comes only when asked for: the update reads it, while an engine, an evaluation or an
    export reads the weights alone, and the state is about two thirds of a version's bytes."""
    folder = paths.policy_dir(version)
    if paths.uri is None:
        return folder
    rec = read_record(paths.record(PREPARE, None) if version == 0 else paths.record(UPDATE, version - 1))
    if rec is not None and rec._fetch is not None:
        inside, pruned = f"{folder.relative_to(paths.root)}/", pruned_files(paths)
        skip = pruned if trainer_state else pruned | {f"{inside}{TRAINER_STATE}"}
        rec._fetch([o for o in rec.outputs if o.path.startswith(inside) and o.path not in skip])
        if version != 0 and (folder / BASE_REF).is_file():  # a LoRA adapter: its base, v0, is read with it
            fetch_policy(paths, 0)
    return folder


def maybe_fault(stage: str, iteration: int | None, point: str) -> None:
    """Fault injection for crash tests: RLVR_FAULT_AT='update:1:before_rename' makes this
    process SIGKILL itself there, exactly as an OOM kill or a pulled plug would; with a fourth part,
    'update:1:before_rename:stall=20', it stalls there for 20 s instead (a slow stage, for faults that
    must land while a stage runs); 'update:1:mid_step:machine', in a process a worker started (a torchrun
    rank), SIGKILLs the process group of its parent too: the worker, torchrun and the rank, as a lost
    machine. Several, comma-separated: each that names this point acts, in order."""
    here = f"{stage}:{iteration}:{point}"
    for want in os.environ.get(FAULT_ENV, "").split(","):  # several faults: comma-separated
        if not want.startswith(here):
            continue
        rest = want.removeprefix(here)
        if rest == ":machine":
            os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)  # (a rank runs in a session of its own)
        if rest == "":
            os.kill(os.getpid(), signal.SIGKILL)
        elif rest.startswith(":stall="):
            time.sleep(float(rest.removeprefix(":stall=")))


class StageTx:
    """One attempt at a stage: temp outputs, then rename, then the commit record."""

    def __init__(self, paths: RunPaths, stage: str, iteration: int | None, inputs: dict[str, Any]):
        self.paths, self.stage, self.iteration, self.inputs = paths, stage, iteration, inputs
        self.fingerprint = fingerprint(inputs)
        self._pending: list[tuple[Path, Path]] = []  # (temp, final)
        self._adopted: list[OutputFile] = []  # files other records committed, listed by this one too (adopt)
        self.started = time.perf_counter()
        self.record: CommitRecord | None = None

    def output(self, final: Path) -> Path:
        """A fresh temporary folder that becomes `final` on commit."""
        for stale in stale_temporaries(final):
            remove_path(stale)
        tmp = final.parent / f"{TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        self._pending.append((tmp, final))
        return tmp

    def adopt(self, outputs: list[OutputFile]) -> None:
        """List files that other records committed (a stage's parts) as this record's outputs too, as
        those records list them: nothing is moved, uploaded or swept, and each stays its record's."""
        self._adopted.extend(outputs)

    def commit(self, *, rows: int, extra: dict[str, Any] | None = None) -> CommitRecord:
        if (ws := workspace_of(self.paths)) is not None:
            return self._commit_to_store(ws, rows, extra)
        maybe_fault(self.stage, self.iteration, "before_rename")
        outputs: list[OutputFile] = list(self._adopted)
        for tmp, final in self._pending:
            for f in sorted(p for p in tmp.rglob("*") if p.is_file()):
                outputs.append(output_file(f, final.relative_to(self.paths.root) / f.relative_to(tmp)))
            remove_path(final)  # an uncommitted leftover of an earlier, killed attempt
            os.replace(tmp, final)
        for o in outputs[len(self._adopted) :]:  # the hashes just taken stand for the renamed files (rename keeps mtime)
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
        outputs = [*self._adopted, *(o.model_copy(update={"etag": objs[o.key].etag}) for o in outputs)]
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
            remove_path(final)
            os.replace(tmp, final)
        for o in outputs[len(self._adopted) :]:
            ws.adopt(root / o.path, o.sha256)
        objects.sweep(ws, [str(final.relative_to(root)) for _, final in self._pending], keep={o.key for o in outputs})
        self._pending.clear()
        self.record = record
        return record

    def written_bytes(self) -> int:
        """Bytes in this attempt's temporary outputs so far (a full disk's message says what was needed)."""
        return sum(f.stat().st_size for tmp, _ in self._pending for f in tmp.rglob("*") if f.is_file())

    def abort(self) -> None:
        for tmp, _ in self._pending:
            remove_path(tmp)
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
        written = tx.written_bytes()
        tx.abort()
        if isinstance(exc, Exception) and not isinstance(exc, DiskSpaceError) and disk_full(exc, free):
            where = stage if iteration is None else f"{stage} {iteration}"
            raise DiskSpaceError(
                f"{where} failed because the disk holding {paths.root} is full ({free:,} bytes free; it needs more than "
                f"the {written:,} bytes of output it had written; "
                f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160] if str(exc).strip() else ''}).\n"
                f"Free some space, or keep fewer checkpoints ([checkpoint] keep_last, keep_every), then `rlvr resume {paths.location}`"
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
