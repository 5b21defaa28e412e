"""Opening and creating runs: the frozen run.toml and the config it holds.

`run.toml` is the validated config of the run, with its hash on the first line. A run's config
never changes after creation (every stage's fingerprint depends on it), except
`run.iterations`, the target that `rlvr train --iterations N` may raise. The hash is checked
against the config hash that the commit records hold too, so deleting the hash line and editing
the config is refused as well.
"""

from __future__ import annotations

import copy
import errno
import fcntl
import json
import logging
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from rlvr.config import MUTABLE_SECTIONS, Config, ConfigError, diff_configs, hash_data, parse_config
from rlvr.errors import RlvrError
from rlvr.schema import PREPARE, RunPaths
from rlvr.store import write_text_atomic

HASH_PREFIX = "# config_hash = "
log = logging.getLogger("rlvr")


class RunError(RlvrError, RuntimeError):
    """A run folder that cannot be used as asked; the message says what to do."""


@dataclass(frozen=True)
class Run:
    paths: RunPaths
    config: Config
    data: dict  # run.toml's config data as written (unset fields, and fields newer than the run, absent)

    @property
    def config_hash(self) -> str:
        """hash_data of the run's own data: stable when rlvr later adds config fields."""
        return hash_data(self.data)


def _write_config(paths: RunPaths, data: dict) -> None:
    """run.toml = the hash line + `data` (config as TOML data: unset fields left out)."""
    text = f"{HASH_PREFIX}{hash_data(data)}\n# frozen config of this run; written by rlvr, do not edit\n\n{tomli_w.dumps(data)}"
    write_text_atomic(paths.config, text)


def open_run(run_dir: str | Path) -> Run:
    paths = RunPaths(Path(run_dir).resolve())
    if not paths.config.is_file():
        raise RunError(f"no run at {run_dir} (no run.toml); start one with `rlvr train --run {run_dir}`")
    text = paths.config.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise RunError(
            f"{paths.config} is not valid TOML ({err}); it was edited by hand: restore it or start a new run"
        ) from None
    cfg = parse_config(data, str(paths.config))
    first = text.splitlines()[0] if text else ""
    if first.startswith(HASH_PREFIX) and first.removeprefix(HASH_PREFIX).strip() != hash_data(data):
        raise RunError(
            f"{paths.config} was edited after the run started (its config hash no longer matches); "
            "a run's config is frozen: undo the edit, or start a new run with the new config"
        )
    if (recorded := recorded_config_hash(paths)) and recorded[0] != hash_data(data):
        raise RunError(
            f"{paths.config} does not match the config hash {recorded[0]} recorded in {recorded[1]}: it was edited "
            "after the run started; a run's config is frozen: undo the edit, or start a new run with the new config"
        )
    return Run(paths, cfg, data)


def recorded_config_hash(paths: RunPaths) -> tuple[str, Path] | None:
    """(config hash, record) from the first readable commit record (prepare's, else an iteration's).

    Every record's inputs carry the run's config hash. Unreadable records are skipped here:
    `rlvr verify-store` reports them."""
    candidates = [paths.record("prepare", None), *sorted(paths.stages.glob("iteration=*/*.json"))]
    for path in candidates:
        try:
            recorded = json.loads(path.read_bytes())["inputs"]["config"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(recorded, str):
            return recorded, path
    return None


def started(paths: RunPaths) -> bool:
    """Has the run committed anything (its first stage, prepare)? Before that its config may still change."""
    return paths.record(PREPARE, None).is_file()


def create_or_open(run_dir: str | Path, config: Config | None, iterations: int | None) -> Run:
    """A new run with `config` (defaults when None), or the existing one at run_dir.

    An existing run keeps its frozen config; passing a different one is an error that lists
    the differences, except while nothing is committed yet (a first start that failed: the
    corrected config replaces it) and for [checkpoint] retention, which changes no output and
    is taken from `config` when it sets it. `iterations` raises (or lowers) the run's target.
    A new run is checked (rlvr.preflight) before its folder is created.
    """
    from rlvr import preflight

    paths = RunPaths(Path(run_dir).resolve())
    fresh = not paths.config.is_file() or (config is not None and not started(paths))
    if not fresh:
        run = open_run(run_dir)
        if config is not None and (diff := diff_configs(run.config, config)):
            raise RunError(
                f"{run_dir} already holds a run with another config:\n  "
                + "\n  ".join(diff)
                + f"\nuse a new --run folder for the new config, or drop the config argument to continue {run_dir}"
            )
        cfg = run.config
        data = copy.deepcopy(run.data)  # kept as written: only run.iterations and [checkpoint] may change
        for section in (s for s in MUTABLE_SECTIONS if config is not None and s in config.model_fields_set):
            data[section] = getattr(config, section).model_dump(mode="json", exclude_none=True)
            cfg = parse_config(data, str(paths.config))
    else:
        if not paths.config.is_file() and paths.root.exists() and any(paths.root.iterdir()):
            raise RunError(f"{run_dir} exists, is not empty and holds no run.toml; choose an empty or new folder")
        cfg = config or Config()
        data = cfg.model_dump(mode="json", exclude_none=True)
        for note in preflight.check_start(cfg, paths.root):
            log.warning("%s", note)
    if iterations is not None:
        try:
            cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"iterations": iterations})})
            cfg = Config.model_validate(cfg.model_dump())
        except ValueError as err:
            raise ConfigError(f"--iterations {iterations}: {err}") from None
        data.setdefault("run", {})["iterations"] = iterations
    if fresh or data != run.data:  # an unchanged run is not rewritten (it may be on a read-only disk)
        try:
            paths.root.mkdir(parents=True, exist_ok=True)
            if fresh and paths.config.is_file():  # replacing a failed first start's config: never under a live writer
                with writer_lock(paths.root):
                    _write_config(paths, data)
            else:
                _write_config(paths, data)
        except OSError as err:
            if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            raise RunError(
                f"cannot write {paths.config} ({err.strerror}): the run folder is on a read-only disk or not "
                "writable by you; copy the run to a writable disk"
            ) from None
    return open_run(paths.root)


LOCK_FILE = ".lock"


@contextmanager
def _pid_lock(path: Path, refusal: str) -> Iterator[None]:
    """An exclusive flock on `path` holding this process's pid; another holder is refused with
    `refusal` ({pid} filled with the holder's pid). The OS drops the lock when the holder dies (even SIGKILL)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise RunError(refusal.replace("{pid}", holder)) from None  # not format(): run_dir may hold braces
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


@contextmanager
def writer_lock(run_dir: str | Path) -> Iterator[None]:
    """One writer per run: a second `rlvr train`/`resume` on the same folder fails at once
    instead of interleaving commits."""
    path = Path(run_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with _pid_lock(path, f"another rlvr process (pid {{pid}}) is writing {run_dir}; wait for it to finish or stop it"):
        yield


SERVE_LOCK_FILE = ".serve.lock"
SERVE_INFO_FILE = ".serve.json"  # written by `rlvr serve`: deployment, schedule, API URL, pid (read by `rlvr status`)


def _served_by(path: Path) -> str | None:
    """The pid holding the serve lock at `path`, or None when nobody serves the run."""
    if not path.is_file():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # succeeds only when no `rlvr serve` holds it
        return None
    except BlockingIOError:
        return os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
    finally:
        os.close(fd)


def refuse_if_served(run_dir: str | Path) -> None:
    """A manual train/resume while a schedule trains the same run would race it for every stage."""
    if (pid := _served_by(Path(run_dir) / SERVE_LOCK_FILE)) is not None:
        raise RunError(
            f"{run_dir} is trained on a schedule by `rlvr serve` (pid {pid}); stop it (Ctrl-C) before training "
            "the run by hand, or let the schedule add the iterations"
        )


@contextmanager
def serve_lock(run_dir: str | Path) -> Iterator[None]:
    """One schedule per run: held by `rlvr serve` while it serves; released when it exits (even SIGKILL)."""
    refusal = (
        f"{run_dir} already has a schedule: `rlvr serve` (pid {{pid}}) serves it; one schedule per run "
        "(stop that one first to change the schedule)"
    )
    with _pid_lock(Path(run_dir) / SERVE_LOCK_FILE, refusal):
        yield


def serve_info(run_dir: str | Path) -> dict | None:
    """What `rlvr serve` wrote about its schedule, while it is serving; None otherwise."""
    root = Path(run_dir)
    if _served_by(root / SERVE_LOCK_FILE) is None:
        return None
    try:
        return json.loads((root / SERVE_INFO_FILE).read_text())
    except (OSError, ValueError):
        return None
