"""Starting a run: a new run is checked (rlvr.checks.preflight) before its folder is created."""

from __future__ import annotations

import copy
import errno
import logging
from pathlib import Path

from rlvr.checks import preflight
from rlvr.config import MUTABLE_SECTIONS, Config, ConfigError, diff_configs, parse_config
from rlvr.store.locks import writer_lock
from rlvr.store.run import Run, RunError, _write_config, open_run, started
from rlvr.store.workspace import holds_files, run_paths

log = logging.getLogger("rlvr")


def create_or_open(run_dir: str | Path, config: Config | None, iterations: int | None) -> Run:
    """A new run with `config` (defaults when None), or the existing one at run_dir.

    An existing run keeps its frozen config; passing a different one is an error that lists
    the differences, except while nothing is committed yet (a first start that failed: the
    corrected config replaces it) and for [checkpoint] and [tracking], which change no output and are
    taken from `config` when it sets them. `iterations` raises (or lowers) the run's target.
    A new run is checked (rlvr.checks.preflight) before its folder is created.
    """
    paths = run_paths(run_dir)  # a URI: the run's working copy, its records synced (rlvr.store.workspace)
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
        data = copy.deepcopy(run.data)  # kept as written: only run.iterations and MUTABLE_SECTIONS may change
        for section in (s for s in MUTABLE_SECTIONS if config is not None and s in config.model_fields_set):
            data[section] = getattr(config, section).model_dump(mode="json", exclude_none=True)
            cfg = parse_config(data, str(paths.config))
    else:
        if not paths.config.is_file() and holds_files(paths):
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
                with writer_lock(paths.location):
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
    return open_run(paths.location)
