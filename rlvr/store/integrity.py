"""Checking a whole run store against its commit records, and redoing a damaged stage.

`check_store(dir)` reads every commit record and checks every file it lists (size and sha256),
and run.toml against the config hash the records hold; it returns one Problem per damaged file or
record instead of stopping at the first. `redo(dir, "rollout:3")` removes that stage's commit record,
so that `resume` recomputes it; the stages are deterministic, so a redone stage whose inputs are
intact writes the same bytes again, and every later stage whose inputs did change (fingerprints
chain the stages) is recomputed after it.

    rlvr verify-store runs/demo                  # one line per damaged file, exit 1 if any
    rlvr verify-store s3://b/runs/x --remove-orphans   # object storage: delete what no record lists
    rlvr resume runs/demo --redo rollout:3       # recompute rollout 3 (and whatever its new bytes change)

Tests: tests/integration/test_integrity.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlvr.config import Config
from rlvr.schema import ITERATION_GLOB, ITERATION_STAGES, PREPARE, RESCORE_PREFIX, RunPaths, iteration_of
from rlvr.store import objects
from rlvr.store.commit import remove_record
from rlvr.store.locks import writer_lock
from rlvr.store.records import CorruptRecordError, output_problems, pruned_files, read_record, redo_spec
from rlvr.store.run import RunError, open_run
from rlvr.store.workspace import workspace_of


@dataclass(frozen=True)
class Problem:
    stage: str
    iteration: int | None
    path: str  # relative to the run root
    what: str

    @property
    def redo(self) -> str:
        return redo_spec(self.stage, self.iteration)


def _records(paths: RunPaths) -> list[tuple[str, int | None, Path]]:
    """Every commit record on disk, (stage, iteration, path), whatever the run's target."""
    found = [(PREPARE, None, paths.record(PREPARE, None))] if paths.record(PREPARE, None).is_file() else []
    for path in sorted(paths.stages.glob(f"{ITERATION_GLOB}/*.json")):
        found.append((path.stem, iteration_of(path.parent), path))
    return found


def check_store(run_dir: str | Path, *, download: bool = True) -> tuple[list[Problem], int]:
    """(problems, files checked): every committed file against its record, and every record.

    On object storage every object is checked against its record's size and ETag (one listing), and
    with `download` its bytes against the sha256 too, through the sha256-keyed cache (each file
    downloaded once per machine); a local run's files are always hashed."""
    run = open_run(run_dir)  # RunError when run.toml no longer matches the records' config hash
    problems: list[Problem] = []
    checked = 0
    for stage, iteration, path in _records(run.paths):
        try:
            rec = read_record(path)
        except CorruptRecordError:
            problems.append(Problem(stage, iteration, str(path.relative_to(run.paths.root)), "corrupt commit record"))
            continue
        # a rescore is committed under its own verify settings (its inputs), not the run's config
        if not stage.startswith(RESCORE_PREFIX) and rec.inputs.get("config") != run.config_hash:
            problems.append(
                Problem(
                    stage,
                    iteration,
                    str(path.relative_to(run.paths.root)),
                    f"committed under config {rec.inputs.get('config')}, run.toml is {run.config_hash}",
                )
            )
        checked += len(rec.outputs)
        found = output_problems(rec, run.paths)
        if download and run.paths.uri is not None and rec._fetch is not None:
            bad, pruned = {p for p, _ in found}, pruned_files(run.paths)
            found += workspace_of(run.paths).fetch([o for o in rec.outputs if o.path not in bad and o.path not in pruned])
        problems += [Problem(stage, iteration, p, what) for p, what in found]
    return problems, checked


def orphans(run_dir: str | Path) -> list[str]:
    """Objects under a run's prefix that no commit record lists (the uploads of an attempt that was
    killed, or is running now, before its record): never seen by a reader. [] for a local run, whose
    leftovers are temporary folders the next attempt removes."""
    run = open_run(run_dir)
    if (ws := workspace_of(run.paths)) is None:
        return []
    listed: set[str] = set()
    for _, _, path in _records(run.paths):
        try:
            listed |= {o.key for o in read_record(path).outputs if o.key}
        except CorruptRecordError:
            return []  # what it listed is unknown: nothing is an orphan for sure (verify-store reports the record)
    return objects.orphans(ws, listed)


def remove_orphans(run_dir: str | Path) -> list[str]:
    """Delete a run's orphans (see `orphans`) under its writer lock, so that no attempt in flight loses
    its uploads; returns the deleted keys. `rlvr verify-store RUN --remove-orphans`."""
    with writer_lock(run_dir):
        found = orphans(run_dir)
        if found:
            workspace_of(open_run(run_dir).paths).remove(found)
    return found


def earliest(problems: list[Problem], cfg: Config) -> Problem:
    """The problem whose stage comes first in the flow: the one to redo first (a redone stage whose
    bytes change also recomputes the later stages that read it; `verify-store` lists what is left)."""
    rank = {key: k for k, key in enumerate(cfg.stage_plan())}
    return min(problems, key=lambda p: rank.get((p.stage, p.iteration), len(rank)))


def summary(problems: list[Problem], run_dir: str | Path, cfg: Config) -> str:
    """One line for `resume`: the damaged files and the --redo that repairs them."""
    files = ", ".join(f"{p.path} ({p.what})" for p in problems[:4]) + (
        f" and {len(problems) - 4} more" if len(problems) > 4 else ""
    )
    return (
        f"{len(problems)} committed file(s) no longer match their commit records: {files}; "
        f"recompute with `rlvr resume {run_dir} --redo {earliest(problems, cfg).redo}`"
    )


def parse_redo(spec: str, cfg: Config) -> tuple[str, int | None]:
    """'rollout:3' -> ('rollout', 3); 'prepare' -> ('prepare', None); RunError naming the choices otherwise."""
    stage, _, it = spec.partition(":")
    order = cfg.stage_plan()
    try:
        key = (stage, int(it) if it else None)
    except ValueError:
        key = None
    if key not in order:
        last = cfg.run.iterations - 1
        raise RunError(
            f"--redo {spec!r} is not a stage of this run: give prepare, or STAGE:ITERATION with STAGE one of "
            f"{', '.join(ITERATION_STAGES)}{', evaluate' if cfg.eval.every else ''} and ITERATION 0..{last} "
            "(e.g. --redo rollout:0)"
        )
    return key


def redo(run_dir: str | Path, spec: str) -> bool:
    """Remove the commit record of `spec`'s stage, so that `resume` recomputes it; True if one was removed.

    Only that record goes: every later stage is recomputed by the fingerprint chain exactly when
    the redone stage's bytes differ from what it read before. Deterministic stages whose inputs are
    intact write the same bytes again, so the later stages stay committed, which matters because
    checkpoint retention keeps the trainer state of the newest policy only: an old update could
    not be recomputed at all. Outputs stay until the stage's next attempt replaces them (a stage
    without a record is simply not committed, whatever files it left)."""
    run = open_run(run_dir)
    stage, iteration = parse_redo(spec, run.config)
    return remove_record(run.paths, stage, iteration)
