"""The run store's one filesystem layer: where a run lives, and every operation on an object store.

A run location is a local folder or a URI, `s3://bucket/prefix` (`is_remote`). A local run is
served by the POSIX code it always had (rename, flock); everything a run on object storage does to
the bucket goes through `ObjectStore` here: list, read, download, upload, a conditional put
(create-only, or only-if-unchanged), delete. No other module talks to the bucket.

The layer is fsspec (s3fs for s3://), not pyarrow.fs: a commit record and the writer lease need
conditional writes, and s3fs sends them (`mode="create"` is S3's `If-None-Match: *`; `IfMatch` is
passed through), while pyarrow's S3FileSystem has neither (apache/arrow#44281). s3fs runs on
botocore, so the standard AWS environment is honoured as every AWS tool honours it:
AWS_ENDPOINT_URL (MinIO, Ceph, R2, a test server), AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, AWS_REGION, AWS_PROFILE and ~/.aws/{config,credentials}, instance roles. rlvr
passes no credential of its own and never writes one anywhere: a URI holding one is refused, and
messages name the URI and the endpoint only.

    store = object_store("s3://bucket/runs/exp1")
    store.put("_stages/prepare.json", data, create=True)    # Conflict when it exists already

Tests: tests/integration/test_store_s3.py (against a moto server on 127.0.0.1, over HTTP).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from rlvr.errors import RlvrError

SCHEMES = ("s3",)  # the schemes whose conditional writes are tested; fsspec has others (gcs, az): not yet


class ObjectStoreError(RlvrError, RuntimeError):
    """An object-store location that cannot be used as given (bad URI, no access, missing extra)."""


class Unreachable(RlvrError, ConnectionError):
    """The object store did not answer; transient (rlvr.errors.is_transient): a task retries it."""


class Conflict(RlvrError, RuntimeError):
    """A conditional write lost: the object exists (create-only) or changed (only-if-unchanged)."""


@dataclass(frozen=True)
class Obj:
    """What a listing says of one object: its size and ETag (a new ETag for every write of it)."""

    size: int
    etag: str


def is_remote(location: str | Path) -> bool:
    """Is `location` an object-store URI (scheme://...) rather than a local folder?"""
    return isinstance(location, str) and "://" in location and not location.startswith("file://")


def within(location: str, roots: list[str]) -> bool:
    """Does the run at `location` lie at or under one of `roots` (s3:// prefixes or local folders)?
    Compared by whole path segments after normalising, so 's3://b/runs-other' is not under 's3://b/runs'
    and '/data/runs/../x' is not under '/data/runs'.

    >>> within("s3://bucket/runs/exp1", ["s3://bucket/runs"]), within("s3://bucket/runs2/x", ["s3://bucket/runs"])
    (True, False)
    >>> within("/data/runs/../etc", ["/data/runs"]), within("/data/runs/a", ["s3://data/runs", "/data/runs/"])
    (False, True)
    """

    def parts(loc: str) -> tuple[str, ...]:
        if is_remote(loc):
            scheme, _, rest = loc.partition("://")
            return (scheme, *[p for p in rest.split("/") if p and p != "."])
        return ("file", *Path(os.path.abspath(loc)).parts)

    if ".." in location.split("/") and is_remote(location):
        return False
    mine = parts(location)
    return any(mine[: len(r)] == r for r in map(parts, roots))


def split_uri(uri: str) -> tuple[str, str]:
    """'s3://bucket/runs/x/' -> ('s3', 'bucket/runs/x'); ObjectStoreError for what rlvr cannot use."""
    parts = urlsplit(uri)
    if parts.scheme not in SCHEMES:
        raise ObjectStoreError(
            f"{uri}: run locations are a local folder or s3://bucket/prefix ({parts.scheme}:// is not supported)"
        )
    if "@" in parts.netloc or parts.query or parts.fragment:
        raise ObjectStoreError(
            f"{parts.scheme}://{parts.hostname or ''}/...: a run URI holds no credentials or options; give them in the "
            "environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or AWS_PROFILE; AWS_ENDPOINT_URL for MinIO and others)"
        )
    bucket, prefix = parts.netloc, parts.path.strip("/")
    if len(bucket) < 3 or not prefix:
        raise ObjectStoreError(f"{uri}: give a bucket and a prefix for the run, e.g. s3://my-bucket/runs/exp1")
    return parts.scheme, f"{bucket}/{prefix}"


def _filesystem(scheme: str):
    try:
        import s3fs
    except ImportError:
        raise ObjectStoreError("s3:// runs need the s3 extra: pip install 'rlvr[s3]' (s3fs)") from None
    # no listing cache: a listing is the run's state and must be read anew; credentials, region and
    # endpoint come from botocore's own resolution of the environment (module docstring). Completing a
    # multipart upload of a GB checkpoint may take minutes (AWS documents it; moto takes ~60 s a GB):
    # botocore's 60 s read timeout would retry a completion still in progress, and fail it
    return s3fs.S3FileSystem(use_listings_cache=False, skip_instance_cache=True, config_kwargs={"read_timeout": 600})


def _endpoint() -> str:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or "AWS S3"


@dataclass
class Traffic:
    """Bytes and requests this process sent to and read from the object store (bench/store.py reads it)."""

    bytes_up: int = 0
    bytes_down: int = 0
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, up: int = 0, down: int = 0) -> None:
        with self.lock:
            self.bytes_up, self.bytes_down, self.requests = self.bytes_up + up, self.bytes_down + down, self.requests + 1


TRAFFIC = Traffic()


class ObjectStore:
    """One run's prefix on an object store; keys are relative to it ('_stages/prepare.json')."""

    def __init__(self, uri: str):
        scheme, self.base = split_uri(uri)
        self.uri = f"{scheme}://{self.base}"
        self.fs = _filesystem(scheme)

    def _key(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def _call(self, what: str, fn, *args, **kwargs):
        """Every request, with the store's errors said in rlvr's terms (never with a credential)."""
        try:
            return fn(*args, **kwargs)
        except FileExistsError:
            raise Conflict(f"{what}: the object exists already") from None
        except PermissionError as err:
            raise ObjectStoreError(
                f"{what}: access denied by {_endpoint()} ({err}); check the credentials in the environment "
                "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE) and the bucket's policy"
            ) from None
        except OSError as err:
            text = str(err)
            if "pre-condition" in text or "PreconditionFailed" in text or "ConditionalRequestConflict" in text:
                raise Conflict(f"{what}: the object changed meanwhile") from None
            if isinstance(err, FileNotFoundError):
                if "bucket does not exist" in text:
                    bucket = self.base.split("/")[0]
                    raise ObjectStoreError(f"{what}: there is no bucket {bucket!r} at {_endpoint()}; create it first") from None
                raise
            raise Unreachable(f"{what}: {_endpoint()} failed ({type(err).__name__}: {text[:200]})") from err
        except Exception as err:  # botocore's own: no credentials, endpoint connection errors
            name = type(err).__name__
            if "Credential" in name:
                raise ObjectStoreError(
                    f"{what}: no AWS credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
                ) from None
            if "Connect" in name or "Timeout" in name or "Endpoint" in name:
                raise Unreachable(
                    f"{what}: {_endpoint()} did not answer ({name}); check the endpoint (AWS_ENDPOINT_URL) and the network"
                ) from err
            raise

    def list(self) -> dict[str, Obj]:
        """Every object under the run's prefix: relative key -> size and ETag (one LIST per 1000 keys)."""
        found = self._call(f"list {self.uri}", self.fs.find, self.base, detail=True)
        TRAFFIC.add()
        cut = len(self.base) + 1
        return {k[cut:]: Obj(int(v["size"]), v["ETag"]) for k, v in found.items() if v.get("type") == "file"}

    def head(self, rel: str) -> Obj | None:
        try:
            info = self._call(f"head {self.uri}/{rel}", self.fs.info, self._key(rel))
        except FileNotFoundError:
            return None
        finally:
            TRAFFIC.add()
        return Obj(int(info["size"]), info["ETag"])

    def read(self, rel: str) -> bytes | None:
        """The object's bytes; None when there is none."""
        try:
            data = self._call(f"read {self.uri}/{rel}", self.fs.cat_file, self._key(rel))
        except FileNotFoundError:
            return None
        TRAFFIC.add(down=len(data))
        return data

    def read_many(self, rels: list[str]) -> dict[str, bytes]:
        """Several small objects at once (concurrent requests); those that are gone are left out."""
        if not rels:
            return {}
        got = self._call(f"read {self.uri}", self.fs.cat, [self._key(r) for r in rels], on_error="omit")
        cut = len(self.base) + 1
        out = {k[cut:]: v for k, v in got.items() if isinstance(v, bytes)}
        TRAFFIC.add(down=sum(len(v) for v in out.values()))
        return out

    def download(self, rel: str, dest: Path) -> None:
        self._call(f"download {self.uri}/{rel}", self.fs.get_file, self._key(rel), str(dest))
        TRAFFIC.add(down=dest.stat().st_size)

    def upload(self, src: Path, rel: str) -> Obj:
        """Upload a local file (multipart when large); returns the new object's size and ETag."""
        self._call(f"upload {self.uri}/{rel}", self.fs.put_file, str(src), self._key(rel))
        TRAFFIC.add(up=src.stat().st_size)
        got = self.head(rel)
        if got is None:  # S3 is read-after-write consistent: an upload that left nothing is the store's fault
            raise Unreachable(f"upload {self.uri}/{rel}: the object is missing right after its upload")
        return got

    def put(self, rel: str, data: bytes, *, create: bool = False, if_match: str | None = None) -> Obj:
        """Write a small object. create=True: only if no object has the key (Conflict otherwise), the
        commit point of a record; if_match=ETAG: only if the object is still that version (the lease).
        An object that already holds exactly `data` is this write's own (a retry after a lost reply)."""
        kwargs = {"mode": "create"} if create else {}
        if if_match is not None:
            kwargs["IfMatch"] = if_match
        try:
            out = self._call(f"write {self.uri}/{rel}", self.fs.pipe_file, self._key(rel), data, **kwargs)
        except Conflict:
            # A request the store applied but whose reply was lost is retried (botocore, s3fs), and the retry
            # meets the first attempt's own object. Every conditional write rlvr makes is unique to its writer
            # (a record names its attempt and creation time, a lease body its holder id): the same bytes are
            # this write, never another writer's. Anything else did lose.
            if self.read(rel) != data:
                raise
            TRAFFIC.add(up=len(data))
            return self.head(rel) or Obj(len(data), "")
        TRAFFIC.add(up=len(data))
        etag = out.get("ETag") if isinstance(out, dict) else None
        return Obj(len(data), etag) if etag else self.head(rel)

    def delete(self, rels: list[str]) -> None:
        if rels:
            self._call(f"delete from {self.uri}", self.fs.rm, [self._key(r) for r in rels])
            TRAFFIC.add()


_STORES: dict[str, ObjectStore] = {}
_STORES_LOCK = threading.Lock()


def object_store(uri: str) -> ObjectStore:
    """The process's one ObjectStore for a run URI."""
    _, base = split_uri(uri)
    with _STORES_LOCK:
        if base not in _STORES:
            _STORES[base] = ObjectStore(uri)
        return _STORES[base]
