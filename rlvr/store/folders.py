"""Files and folders written whole or not at all: a text file by temporary file and rename
(`write_text_atomic`), and folders outside a run (`rlvr eval --out`, `rlvr export --out`):
`new_folder` (a temporary sibling renamed into place; an existing non-empty folder is refused) and
`write_folder_record` / `verified_folder_record`, a record of its files as a stage's record is.

Tests: tests/unit/store/test_store.py, tests/integration/test_eval_export.py.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rlvr.schema import TMP_PREFIX, RunPaths
from rlvr.store.records import (
    CommitRecord,
    CorruptRecordError,
    IntegrityError,
    StoreError,
    fingerprint,
    output_file,
    output_problems,
)


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TMP_PREFIX}{path.name}-{uuid.uuid4().hex[:8]}"
    tmp.write_text(text)
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def stale_temporaries(final: Path) -> list[Path]:
    if not final.parent.is_dir():
        return []
    return list(final.parent.glob(f"{TMP_PREFIX}{final.name}-*"))


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
    for stale in stale_temporaries(final):
        remove_path(stale)
    tmp = final.parent / f"{TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        check_new_folder(final, flag=flag)  # someone may have filled it meanwhile
        os.replace(tmp, final)  # rename(2) replaces an empty directory, never a full one
    except BaseException:
        remove_path(tmp)
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
