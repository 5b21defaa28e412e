"""Reading a user's dataset files: JSONL, JSON (a list of objects), CSV, Parquet (a file or a folder)
and folders written by HF datasets' `save_to_disk` (read with `datasets`, an optional extra).

`read_records(ds)` gives every row as a Record that says where it came from ("data/x.jsonl, line
3"), so that every later error names the file and row. A row that is not UTF-8 or not an object
is a DatasetError here. `source_digests` gives each source file's sha256, which prepare records.
What the columns mean is rlvr.problems.datasets' business, not this module's.
"""

from __future__ import annotations

import csv
import glob
import importlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from rlvr.config import DatasetSection, TaskSection
from rlvr.errors import RlvrError
from rlvr.files import file_sha256

SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")


class DatasetError(RlvrError, ValueError):
    """A dataset that cannot be read as configured; the message names the file, row and column."""


@dataclass(frozen=True)
class Record:
    where: str  # "data/x.jsonl, line 3": where to look
    values: dict[str, Any]


def is_hf_folder(path: Path) -> bool:
    return path.is_dir() and any((path / m).is_file() for m in HF_MARKERS)


def source_paths(ds: DatasetSection) -> list[Path]:
    """The files (or save_to_disk folders) a dataset's `path` names, sorted; none found is an error."""
    raw = ds.path
    if any(ch in raw for ch in "*?["):
        found = [Path(p) for p in sorted(glob.glob(raw, recursive=True))]
        found = [p for p in found if is_hf_folder(p) or (p.is_file() and p.suffix in SUFFIXES)]
    else:
        p = Path(raw)
        if not p.exists():
            raise DatasetError(
                f"dataset {ds.label!r}: {raw} does not exist; set task.path / task.datasets.path to a file, folder or glob"
            )
        if p.is_file() or is_hf_folder(p):
            found = [p]
        else:  # a folder of files, e.g. Parquet shards
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES and not f.name.startswith("."))
    if not found:
        raise DatasetError(f"dataset {ds.label!r}: {raw} names no .jsonl, .json, .csv or .parquet file nor a save_to_disk folder")
    return found


def _files_of(path: Path) -> list[Path]:
    return sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]


def source_digests(task: TaskSection) -> dict[str, str]:
    """sha256 of every file an own dataset reads (folders: each file inside), by path."""
    out = {}
    for ds in task.sources():
        if ds.shipped:
            continue
        for p in source_paths(ds):
            for f in _files_of(p):
                out[str(f.resolve())] = file_sha256(f)
    return out


def _format_of(ds: DatasetSection, path: Path) -> str:
    if is_hf_folder(path):
        return "hf"
    if ds.format != "auto":
        return ds.format
    if path.suffix not in SUFFIXES:
        raise DatasetError(f"{path}: unknown file type {path.suffix!r}; set task.datasets.format to jsonl, json, csv or parquet")
    return SUFFIXES[path.suffix]


def _undecodable(values: dict[str, Any]) -> str | None:
    """The first column whose text held bytes that are not UTF-8 (read with surrogateescape)."""
    for key, value in values.items():
        if re.search("[\udc80-\udcff]", json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value):
            return key
    return None


def _not_utf8(where: str, column: str | None) -> DatasetError:
    col = f", column {column!r}" if column else ""
    return DatasetError(f"{where}{col}: not UTF-8 text; re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)")


def _read_jsonl(path: Path) -> Iterator[Record]:
    for n, line in enumerate(path.read_bytes().decode("utf-8", "surrogateescape").split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {n}"
        try:
            values = json.loads(line)
        except json.JSONDecodeError as err:
            if re.search("[\udc80-\udcff]", line):
                raise _not_utf8(where, None) from None
            raise DatasetError(f"{where}: not a JSON object ({err.msg}); one object per line") from None
        if not isinstance(values, dict):
            raise DatasetError(f"{where}: a JSON {type(values).__name__}, not an object; one object per line")
        if (bad := _undecodable(values)) is not None:
            raise _not_utf8(where, bad)
        yield Record(where, values)


def _read_json(path: Path) -> Iterator[Record]:
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}, line {err.lineno}: not valid JSON ({err.msg})") from None
    if isinstance(rows, dict) and len(rows) == 1 and isinstance(next(iter(rows.values())), list):
        rows = next(iter(rows.values()))  # {"data": [...]}
    if not isinstance(rows, list):
        raise DatasetError(f"{path}: expected a JSON list of objects (or JSONL, one object per line)")
    for n, values in enumerate(rows, start=1):
        where = f"{path}, row {n}"
        if not isinstance(values, dict):
            raise DatasetError(f"{where}: a JSON {type(values).__name__}, not an object")
        if (bad := _undecodable(values)) is not None:
            raise _not_utf8(where, bad)
        yield Record(where, values)


def _read_csv(path: Path) -> Iterator[Record]:
    text = path.read_bytes().decode("utf-8-sig", "surrogateescape")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    for n, values in enumerate(reader, start=1):
        where = f"{path}, row {n} (line {reader.line_num})"
        if (bad := _undecodable(values)) is not None:
            raise _not_utf8(where, bad)
        yield Record(where, {k: (v if v != "" else None) for k, v in values.items() if k is not None})


def _read_parquet(path: Path) -> Iterator[Record]:
    for n, values in enumerate(pq.read_table(path).to_pylist(), start=1):
        yield Record(f"{path}, row {n}", values)


def _read_hf(path: Path) -> Iterator[Record]:
    try:
        datasets = importlib.import_module("datasets")
    except ImportError:
        raise DatasetError(
            f"{path} is a HF datasets save_to_disk folder; reading it needs `datasets`: "
            "pip install 'rlvr[datasets]' (or export it to Parquet: ds.to_parquet('x.parquet'))"
        ) from None
    loaded = datasets.load_from_disk(str(path))
    parts = loaded.items() if isinstance(loaded, datasets.DatasetDict) else [(None, loaded)]
    for split, part in parts:
        for n, values in enumerate(part, start=1):
            where = f"{path}, {f'split {split}, ' if split else ''}row {n}"
            yield Record(where, values if split is None or "split" in values else values | {"split": split})


READERS = {"jsonl": _read_jsonl, "json": _read_json, "csv": _read_csv, "parquet": _read_parquet, "hf": _read_hf}


def read_records(ds: DatasetSection) -> list[Record]:
    return [rec for path in source_paths(ds) for rec in READERS[_format_of(ds, path)](path)]
