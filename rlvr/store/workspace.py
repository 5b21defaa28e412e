"""The local side of a run on object storage: a working copy, and committed files cached by sha256.

The stages, the trainer, the engines and DuckDB read and write local files; a run at
`s3://bucket/prefix` gives them one. Each process that opens the run gets its own working copy
(`$RLVR_CACHE/store/work/<pid>-<id>/`, removed at exit), laid out exactly like a local run folder,
so `RunPaths(root=<working copy>, uri=<the run>)` serves every stage unchanged:

- `sync()` (every `open_run`) lists the run's prefix once and mirrors its metadata, run.toml and
  `_stages/**.json`, into the copy: records are what every reader trusts, and they are small.
- `fetch(outputs)` makes committed files appear at their paths in the copy, as hard links into the
  object cache `$RLVR_CACHE/store/objects/<sha256[:2]>/<sha256>`: downloaded once per machine
  (an unchanged file, such as a tokenizer that every policy version shares, never twice), checked
  against the record's sha256 before it enters the cache, checked again once in each process that
  uses it (rlvr.files.cached_sha256), and read-only (a cached object is never written in place).
- outputs a stage writes go into temporary folders of the copy, as in a local run; the commit
  protocol (rlvr.store.objects) uploads them and `adopt`s the committed files into the cache.

A per-process copy means a reader never sees a writer's half-renamed folder, and two processes on
one machine share only the content-addressed cache, where a file is complete or absent.

Tests: tests/integration/test_store_s3.py.
"""

from __future__ import annotations

import atexit
import os
import shutil
import threading
import uuid
from pathlib import Path

from rlvr.files import cached_sha256, file_sha256, remember_sha256
from rlvr.models.registry import cache_root
from rlvr.procs import remove_left_by_gone
from rlvr.schema import RunPaths
from rlvr.store.fs import Obj, ObjectStore, is_remote, object_store

META_FILES = ("run.toml",)  # besides _stages/**.json: what sync() mirrors


def is_meta(rel: str) -> bool:
    """Run metadata mirrored whole into every working copy: run.toml and the records under _stages/."""
    return rel in META_FILES or (rel.startswith("_stages/") and rel.endswith(".json"))


def store_cache() -> Path:
    return cache_root() / "store"


def object_path(sha256: str) -> Path:
    """Where the cache keeps a committed file's bytes: named by their sha256."""
    return store_cache() / "objects" / sha256[:2] / sha256


def _new_work_dir() -> Path:
    """A fresh working copy for this process; the copies of processes that died are removed first."""
    work = store_cache() / "work"
    work.mkdir(parents=True, exist_ok=True)
    remove_left_by_gone(work)
    root = work / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    atexit.register(shutil.rmtree, root, True)
    return root


def _link(src: Path, dest: Path) -> None:
    """dest becomes src's file (a hard link; a copy across file systems), replacing what was there."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".link-{dest.name}-{uuid.uuid4().hex[:8]}"
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copy2(src, tmp)
    os.replace(tmp, dest)


def _write_local(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".sync-{path.name}-{uuid.uuid4().hex[:8]}"
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Workspace:
    """One process's working copy of one run on object storage (module docstring)."""

    def __init__(self, store: ObjectStore):
        self.store, self.uri = store, store.uri
        self.root = _new_work_dir()
        self.listing: dict[str, Obj] = {}  # key -> size, ETag: the prefix as of the last sync, plus this process's writes
        self._meta: dict[str, str] = {}  # metadata file -> the ETag of its copy here
        self.lock = threading.RLock()

    @property
    def paths(self) -> RunPaths:
        return RunPaths(self.root, self.uri)

    def sync(self) -> None:
        """List the prefix; mirror run.toml and every record (new, changed or gone) into the copy."""
        listing = self.store.list()
        with self.lock:
            self.listing = listing
            changed = [rel for rel, obj in listing.items() if is_meta(rel) and self._meta.get(rel) != obj.etag]
            for rel, data in self.store.read_many(changed).items():
                _write_local(self.root / rel, data)
                self._meta[rel] = listing[rel].etag
            for rel in [r for r in self._meta if r not in listing]:
                (self.root / rel).unlink(missing_ok=True)
                del self._meta[rel]

    def put_text(self, rel: str, text: str, *, create: bool = False) -> None:
        """Write a metadata file to the store (create-only when `create`: rlvr.store.fs.Conflict if it
        exists), then to the copy. The store first: the copy never holds what the store does not."""
        data = text.encode()
        obj = self.store.put(rel, data, create=create)
        with self.lock:
            _write_local(self.root / rel, data)
            self.listing[rel], self._meta[rel] = obj, obj.etag

    def remove(self, rels: list[str]) -> None:
        """Delete objects from the store and their copies here."""
        self.store.delete([r for r in rels if r in self.listing])
        with self.lock:
            for rel in rels:
                self.listing.pop(rel, None)
                self._meta.pop(rel, None)
                (self.root / rel).unlink(missing_ok=True)

    def fetch(self, outputs: list) -> list[tuple[str, str]]:
        """Make each committed file (a record's OutputFile: path, key, sha256) appear at its path in
        the copy, downloading only what the cache lacks; returns (path, what is wrong) for files whose
        bytes are not the record's."""
        problems = []
        for o in outputs:
            cached = object_path(o.sha256)
            if not (cached.is_file() and cached_sha256(cached) == o.sha256) and not self._download(o, cached):
                problems.append((o.path, "sha256 differs from its record"))
                continue
            dest = self.root / o.path
            if not (dest.is_file() and os.path.samefile(dest, cached)):
                _link(cached, dest)
        return problems

    def _download(self, o, cached: Path) -> bool:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.parent / f".tmp-{o.sha256}-{uuid.uuid4().hex[:8]}"
        try:
            self.store.download(o.key or o.path, tmp)
            if file_sha256(tmp) != o.sha256:
                return False
            tmp.chmod(0o444)
            os.replace(tmp, cached)
        finally:
            tmp.unlink(missing_ok=True)
        remember_sha256(cached, o.sha256)
        return True

    def adopt(self, path: Path, sha256: str) -> None:
        """A file this process just committed (hashed, uploaded) joins the cache: it is never downloaded here."""
        cached = object_path(sha256)
        if cached.is_file():
            _link(cached, path)
        else:
            cached.parent.mkdir(parents=True, exist_ok=True)
            path.chmod(0o444)
            try:
                os.link(path, cached)
            except FileExistsError:
                _link(cached, path)
            except OSError:
                shutil.copy2(path, cached)
        remember_sha256(path, sha256)
        remember_sha256(cached, sha256)


_WORKSPACES: dict[str, Workspace] = {}
_LOCK = threading.Lock()


def workspace_for(uri: str) -> Workspace:
    """This process's working copy of the run at `uri` (made on first use)."""
    store = object_store(uri)
    with _LOCK:
        if store.uri not in _WORKSPACES:
            _WORKSPACES[store.uri] = Workspace(store)
        return _WORKSPACES[store.uri]


def workspace_of(paths: RunPaths) -> Workspace | None:
    """The working copy behind `paths`; None for a local run."""
    return workspace_for(paths.uri) if paths.uri else None


def workspace_at(path: Path) -> Workspace | None:
    """The working copy that `path` lies in (a record's path, say); None when it is in no working copy."""
    with _LOCK:
        for ws in _WORKSPACES.values():
            if path == ws.root or ws.root in path.parents:
                return ws
    return None


def holds_files(paths: RunPaths) -> bool:
    """Is there anything at the run's location (a file in its folder, an object under its prefix
    other than a writer lease)? A new run is created only where nothing is."""
    if (ws := workspace_of(paths)) is None:
        return paths.root.exists() and any(paths.root.iterdir())
    with ws.lock:
        return any(k != ".lock" for k in ws.listing)


def run_paths(location: str | Path) -> RunPaths:
    """The paths of the run at `location`: a local folder as it is; a URI's working copy, synced now."""
    if not is_remote(location):
        return RunPaths(Path(location).resolve())
    ws = workspace_for(str(location))
    ws.sync()
    return ws.paths
