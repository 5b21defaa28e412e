"""Opening and creating runs: the frozen run.toml and the config it holds.

`run.toml` is the validated config of the run, with its hash on the first line. A run's config
never changes after creation (every stage's fingerprint depends on it), except
`run.iterations`, the target that `rlvr train --iterations N` may raise. The hash is checked
against the config hash that the commit records hold too, so deleting the hash line and editing
the config is refused as well.
"""

from __future__ import annotations

import json
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from rlvr.config import Config, hash_data, parse_config
from rlvr.errors import RlvrError
from rlvr.schema import ITERATION_GLOB, PREPARE, RunPaths
from rlvr.store.commit import put_text
from rlvr.store.workspace import run_paths

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
    put_text(paths, paths.config, text)


def open_run(run_dir: str | Path) -> Run:
    """The run at a local folder or an object-store URI (s3://bucket/prefix: its working copy, synced)."""
    paths = run_paths(run_dir)
    if not paths.config.is_file():
        raise RunError(f"no run at {run_dir} (no run.toml); start one with `rlvr train --run {run_dir}`")
    where = paths.config if paths.uri is None else f"{paths.uri}/run.toml"  # as the user names it
    text = paths.config.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise RunError(f"{where} is not valid TOML ({err}); it was edited by hand: restore it or start a new run") from None
    cfg = parse_config(data, str(where))
    first = text.splitlines()[0] if text else ""
    if first.startswith(HASH_PREFIX) and first.removeprefix(HASH_PREFIX).strip() != hash_data(data):
        raise RunError(
            f"{where} was edited after the run started (its config hash no longer matches); "
            "a run's config is frozen: undo the edit, or start a new run with the new config"
        )
    if (recorded := recorded_config_hash(paths)) and recorded[0] != hash_data(data):
        raise RunError(
            f"{where} does not match the config hash {recorded[0]} recorded in {recorded[1]}: it was edited "
            "after the run started; a run's config is frozen: undo the edit, or start a new run with the new config"
        )
    return Run(paths, cfg, data)


def recorded_config_hash(paths: RunPaths) -> tuple[str, Path] | None:
    """(config hash, record) from the first readable commit record (prepare's, else an iteration's).

    Every record's inputs carry the run's config hash. Unreadable records are skipped here:
    `rlvr verify-store` reports them."""
    candidates = [paths.record("prepare", None), *sorted(paths.stages.glob(f"{ITERATION_GLOB}/*.json"))]
    for path in candidates:
        try:
            recorded = json.loads(path.read_bytes())["inputs"]["config"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(recorded, str):
            return recorded, path
    return None


def has_run(location: str | Path) -> bool:
    """Does the folder or URI hold a run (its run.toml)?"""
    return run_paths(location).config.is_file()


def started(paths: RunPaths) -> bool:
    """Has the run committed anything (its first stage, prepare)? Before that its config may still change."""
    return paths.record(PREPARE, None).is_file()
