"""`rlvr status`: one row per stage of a run, from its commit records (no torch, no Parquet read)."""

from __future__ import annotations

from pathlib import Path

from rlvr.schema import EVALUATE, PREPARE, UPDATE
from rlvr.store.records import CorruptRecordError, read_record, redo_spec
from rlvr.store.run import open_run


def status_rows(run_dir: str | Path) -> list[dict]:
    """One row per (iteration, stage) up to the run's target: committed or not, rows, seconds;
    `weights` of the rows that commit a policy (prepare: v0, update(i): v_{i+1}): whether its
    weights are still on disk or checkpoint retention pruned them. A corrupt commit record shows as
    not committed, with a note saying so (no file is hashed here: `rlvr verify-store` does that)."""
    from rlvr.store.retention import has_weights

    run = open_run(run_dir)
    rows = []
    for stage, i in run.config.stage_plan():
        try:
            rec = read_record(run.paths.record(stage, i))
        except CorruptRecordError:
            rows.append(
                {**_row(i, stage, None), "note": f"corrupt commit record: rlvr resume {run_dir} --redo {redo_spec(stage, i)}"}
            )
            continue
        rows.append(row := _row(i, stage, rec))
        if stage in (PREPARE, UPDATE) and rec is not None:
            v = 0 if i is None else i + 1
            row["weights"] = f"v{v}" if has_weights(run.paths, v) else f"v{v} pruned"
    return rows


def started_rows(rows: list[dict]) -> list[dict]:
    """status_rows without the iterations that have nothing committed (planned, not begun): what
    `rlvr status --format json` reports. prepare's row (iteration "", not an iteration) stays."""
    begun = {r["iteration"] for r in rows if r["committed"]}
    return [r for r in rows if r["iteration"] == "" or r["iteration"] in begun]


def _row(iteration: int | None, stage: str, rec) -> dict:
    return {
        "iteration": "" if iteration is None else iteration,
        "stage": stage,
        "committed": rec is not None,
        "rows": rec.rows if rec else None,
        "seconds": _seconds(rec) if rec else None,
        "created_at": rec.created_at if rec else None,
        "note": _note(stage, rec) + _made_by(rec.worker) + _parts(rec.extra.get("parts")) if rec else "",
        "weights": "",
        "worker": rec.worker if rec else None,  # the `rlvr worker` that made a placed stage ([placement])
    }


def _seconds(rec) -> float:
    """A stage's seconds; for a stage in parts, its slowest part's (they run side by side) and the commit."""
    parts = rec.extra.get("parts")
    return round(max(p["seconds"] for p in parts) + rec.seconds, 3) if parts else rec.seconds


def _made_by(worker: dict | None) -> str:
    return "" if not worker else f"; by {worker.get('name')} on {worker.get('host')}"


def _parts(parts: list[dict] | None) -> str:
    """A stage in parts (rollout.shards): how many, and each one's rows, seconds and worker."""
    if not parts:
        return ""
    each = ", ".join(
        f"{p['rows']} rows in {p['seconds']:.1f}s" + (f" by {p['worker'].get('name')}" if p.get("worker") else "") for p in parts
    )
    return f"; {len(parts)} parts: {each}"


def _note(stage: str, rec) -> str:
    x = rec.extra
    if stage == "rollout":
        start = f"{'warm, load' if x.get('warm') else 'cold, start'} "
        start += f"{x.get('weight_load_seconds' if x.get('warm') else 'engine_start_seconds', 0):.2f}s"
        stale = f", sampled v{x['policy_version']} (staleness {x['staleness']})" if x.get("staleness") else ""
        return (
            f"{x.get('engine', '')} ({start}), {x.get('tokens', 0)} tokens in {x.get('generation_seconds', 0):.2f}s, "
            f"{x.get('tokens_per_s', 0):.0f} tok/s{stale}"
        )
    if stage == "verify":
        return f"{x.get('correct', 0)} correct, reward mean {x.get('reward_mean', 0):.3f}"
    if stage == EVALUATE:
        k = x.get("samples", 1)
        return f"v{rec.iteration} on {x.get('problems', 0)} held-out: accuracy {x.get('accuracy', 0):.3f}" + (
            f", pass@{k} {x.get(f'pass_at_{k}', 0):.3f}" if k > 1 else ""
        )
    if stage == "update":
        trainer = ", warm trainer" if x.get("warm") else ""
        return (
            f"-> v{x.get('policy_version')}, {x.get('groups_used', 0)} groups used, {x.get('groups_dropped', 0)} dropped{trainer}"
        )
    return f"{rec.rows} problems"
