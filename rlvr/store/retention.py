"""Checkpoint retention: which policy versions keep their weights, and the disk check before an update.

Every update writes policy/v_{i+1}: the HF weights plus trainer_state.pt (optimiser moments, about
twice the fp32 weights). Kept forever, a 135M model fills 31 GB in 20 iterations. Config
`[checkpoint]` keeps the newest `keep_last` versions, every `keep_every`-th, and v0 (the base
model and the KL reference); only the newest version keeps its trainer state, which is all that
exact resume needs (update(i) reads v_i's).

Pruning is part of the commit protocol (rlvr.store.commit): v_k is pruned only after update(k) has
committed v_{k+1}, never while a pending stage (an evaluation, or with rollout.max_staleness >= 1 a
rollout sampling an older version, not yet committed) still needs it,
and a prune record listing the files is written before they are deleted, so `committed()` tells a
pruned file from a lost one and a kill mid-prune is finished by the next prune. Rollouts, scores
and updates of a pruned version stay: only weights go.

Tests: tests/unit/store/test_retention.py (the plan, the protocol, the disk check), tests/e2e/test_e2e.py
(a killed run resumed under keep_last = 1 equals an unkilled one, byte for byte).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from rlvr.config import CheckpointSection
from rlvr.config.plan import behaviour_version
from rlvr.errors import DiskSpaceError, RlvrError
from rlvr.progress import fmt_bytes
from rlvr.schema import EVALUATE, PREPARE, ROLLOUT, TRAINER_STATE, UPDATE, RunPaths
from rlvr.store.commit import put_text
from rlvr.store.records import PruneRecord, read_pruned, read_record
from rlvr.store.run import Run
from rlvr.store.workspace import workspace_of


def plan(versions: list[int], *, keep_last: int, keep_every: int, needed: set[int]) -> tuple[list[int], list[int]]:
    """(versions whose weights go, versions whose trainer state goes), given the committed versions.

    Kept: v0, the newest keep_last, multiples of keep_every, and `needed` (a pending stage reads
    them). Only the newest keeps its trainer state. keep_last = 0 keeps everything.

    >>> plan([0, 1, 2, 3, 4], keep_last=2, keep_every=2, needed=set())
    ([1], [0, 1, 2, 3])
    >>> plan([0, 1, 2, 3, 4], keep_last=1, keep_every=0, needed={2})
    ([1, 3], [0, 1, 2, 3])
    """
    if keep_last == 0 or not versions:
        return [], []
    latest = max(versions)
    keep = {0, *needed, *(v for v in versions if v > latest - keep_last)}
    if keep_every:
        keep |= {v for v in versions if v % keep_every == 0}
    return [v for v in versions if v not in keep], [v for v in versions if v < latest]


def retention(run: Run) -> CheckpointSection:
    """The run's [checkpoint] section. A run.toml without one was written before retention existed:
    it keeps every version, as its owner was promised when it started."""
    return run.config.checkpoint if "checkpoint" in run.data else CheckpointSection(keep_last=0)


def committed_versions(paths: RunPaths) -> list[int]:
    """Policy versions whose producing stage committed: v0 by prepare, v_{k+1} by update(k)."""
    if read_record(paths.record(PREPARE, None)) is None:
        return []
    out = [0]
    while read_record(paths.record(UPDATE, out[-1])) is not None:
        out.append(out[-1] + 1)
    return out


def pending_versions(run: Run) -> set[int]:
    """Versions a stage not yet committed will read: evaluations (eval.every) still to run, and the
    behaviour policy v_max(0, i-k) of each rollout(i) still to run (rollout.max_staleness = k; with
    k = 0 that is v_i, the newest version while rollout(i) is pending, which retention keeps anyway)."""
    cfg = run.config
    evals = {i for i in cfg.eval_points() if read_record(run.paths.record(EVALUATE, i)) is None}
    rollouts = {
        behaviour_version(i, cfg.rollout.max_staleness)
        for i in range(cfg.run.iterations)
        if read_record(run.paths.record(ROLLOUT, i)) is None
    }
    return evals | rollouts


def prune(run: Run) -> list[Path]:
    """Apply the run's retention to its committed versions; returns what was deleted. Idempotent:
    a prune killed half-way is finished by the next call."""
    keep = retention(run)
    paths = run.paths
    drop_weights, drop_state = plan(
        committed_versions(paths), keep_last=keep.keep_last, keep_every=keep.keep_every, needed=pending_versions(run)
    )
    done = read_pruned(paths)
    removed: list[Path] = []
    for v in sorted(set(drop_weights) | set(drop_state)):
        folder = paths.policy_dir(v)
        whole = v in drop_weights
        prior = done.get(v)
        present = present_files(paths, v)
        if prior is not None and (prior.weights or not whole):  # recorded; delete whatever a kill left behind
            targets = list(prior.files)
        else:
            targets = sorted(present) if whole else [f"{folder.relative_to(paths.root)}/{TRAINER_STATE}"]
            targets = [t for t in targets if t in present]
            files = sorted({*(prior.files if prior else []), *targets})
            record = PruneRecord(
                version=v, weights=whole, files=files, created_at=datetime.now(UTC).isoformat(timespec="seconds")
            )
            put_text(paths, paths.pruned_record(v), record.model_dump_json(indent=2))  # record first, then delete
        gone = [t for t in targets if t in present]
        _delete(paths, {t: present[t] for t in gone})
        removed += [paths.root / t for t in gone]
        if whole and folder.is_dir():
            shutil.rmtree(folder)
    return removed


def present_files(paths: RunPaths, version: int) -> dict[str, str | None]:
    """Policy v_version's files that exist: path (relative to the run) -> object key. A local run: the
    files in its folder (key None); on object storage: the committing record's files still listed."""
    folder = paths.policy_dir(version)
    if (ws := workspace_of(paths)) is None:
        return {str(p.relative_to(paths.root)): None for p in folder.rglob("*") if p.is_file()}
    rec = read_record(paths.record(PREPARE, None) if version == 0 else paths.record(UPDATE, version - 1))
    inside = f"{folder.relative_to(paths.root)}/"
    with ws.lock:
        return {o.path: o.key for o in rec.outputs if o.path.startswith(inside) and o.key in ws.listing} if rec else {}


def _delete(paths: RunPaths, files: dict[str, str | None]) -> None:
    """Delete these files of the run (path -> object key, as present_files gives them)."""
    if (ws := workspace_of(paths)) is not None:
        ws.remove([k for k in files.values() if k])
    for rel in files:
        (paths.root / rel).unlink(missing_ok=ws is not None)


def has_weights(paths: RunPaths, version: int) -> bool:
    rec = read_pruned(paths).get(version)
    if paths.uri is not None:
        config = f"{paths.policy_dir(version).relative_to(paths.root)}/config.json"
        return (rec is None or not rec.weights) and config in present_files(paths, version)
    return (rec is None or not rec.weights) and (paths.policy_dir(version) / "config.json").is_file()


class VersionError(RlvrError, ValueError):
    """A policy version asked for by number that the run does not hold: never committed, or pruned."""


def kept_version(paths: RunPaths, version: int | None, *, flag: str = "--version") -> int:
    """The version a command reads the weights of (`rlvr eval`, `rlvr export`): `version`, or the
    newest committed when None. VersionError, naming `flag`, for one that was never committed or
    whose weights retention deleted (with the versions that still have weights)."""
    versions = committed_versions(paths)
    if not versions:
        raise VersionError(
            f"{paths.location} has no policy yet (prepare has not committed v0): `rlvr train --run {paths.location}` first"
        )
    v = versions[-1] if version is None else version
    if v not in versions:
        raise VersionError(
            f"{flag} {v}: {paths.location} has policy versions v0..v{versions[-1]} committed; give one of them "
            f"(`rlvr status {paths.location}` lists them)"
        )
    pruned = read_pruned(paths).get(v)
    if pruned is not None and pruned.weights:
        kept = ", ".join(f"v{k}" for k in versions if has_weights(paths, k))
        raise VersionError(
            f"{flag} {v}: its weights were deleted by [checkpoint] retention on {pruned.created_at}; versions with "
            f"weights: {kept}. Give one of those (runs started with checkpoint.keep_last = 0, or keep_every, keep more)"
        )
    if not has_weights(paths, v):
        raise VersionError(
            f"{flag} {v}: {paths.policy_dir(v)} has no config.json; `rlvr verify-store {paths.location}` says what to redo"
        )
    return v


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def checkpoint_bytes(policy: Path) -> int:
    """Estimated size of the checkpoint an update from `policy` writes: the same weights and
    tokenizer, plus a trainer state as big as the current one (or, for v0, which has none, AdamW's
    two fp32 moments: twice the weights)."""
    state = policy / TRAINER_STATE
    weights = folder_bytes(policy) - (state.stat().st_size if state.is_file() else 0)
    if state.is_file():
        return weights + state.stat().st_size
    return weights + 2 * sum(p.stat().st_size for p in policy.glob("*.safetensors"))


def check_free_space(run: Run, version: int) -> None:
    """Raise DiskSpaceError when the disk of run's policy/ folder cannot hold the checkpoint that
    an update from v_version will write (checked before the update starts, not after an hour of it)."""
    folder = run.paths.root / "policy"
    needed = checkpoint_bytes(run.paths.policy_dir(version))
    free = shutil.disk_usage(folder if folder.is_dir() else run.paths.root).free
    if free < needed:
        keep = retention(run)
        raise DiskSpaceError(
            f"not enough free disk for policy v{version + 1} in {folder}: it needs about {fmt_bytes(needed)}, "
            f"{fmt_bytes(free)} free.\nFree some space, or keep fewer checkpoints: [checkpoint] keep_last = {keep.keep_last}, "
            f"keep_every = {keep.keep_every} (e.g. `rlvr train --run {run.paths.location} --set checkpoint.keep_last=1`), then `rlvr resume {run.paths.location}`"
        )
