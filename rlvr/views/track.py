"""Experiment tracking: a run's figures and sampled responses sent to TensorBoard, MLflow or W&B.

The figures are the report's: rlvr.views.report.collect, DuckDB over the committed shards only, so
a tracker never shows a number that `rlvr sql` would not. Step i of the tracker is iteration i:

    train part of step i    committed once update(i) is: reward, accuracy, format, length, entropy, KL,
                            clipping, mismatch, groups with signal, pass rate per task, stage seconds,
                            and a table of iteration i's first `tracking.responses` responses
    heldout part of step i  committed once evaluate(i) is: held-out accuracy of policy v_i, per task

`sync(run_dir)` sends every committed part that this destination has not had yet and writes down what
it sent in tracking/<backend>-<digest>.json in the run folder (a side file, not committed data: the
destination, the tracker's run id, the parts sent). So a resumed run continues the same tracker run
and sends no step twice, and a replay (`rlvr track DIR`) of a run already sent sends nothing. The
state is written after each part is flushed: a kill in between repeats at most that one part. W&B
is not `durable`: its offline file is written only as a session finishes (a SIGKILLed session left
an empty one), so each sync is one W&B session, finished before its parts count as sent.
The training flow calls sync after every committed update and evaluation (rlvr/tasks/stages.py).

    rlvr track runs/demo --backend tensorboard && tensorboard --logdir runs/demo/tracking/tensorboard

Runs on object storage are refused (their working copy is per process, so the state would not
outlive it). Test: tests/integration/test_tracking.py.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rlvr.config import TrackingSection
from rlvr.schema import RunPaths
from rlvr.store.folders import write_text_atomic
from rlvr.store.run import Run, open_run
from rlvr.views.report import QUERIES, RESPONSE_COLUMNS, ReportData, collect
from rlvr.views.sql import connect_run
from rlvr.views.trackers import Target, Tracker, TrackingError, check_installed, open_tracker

log = logging.getLogger("rlvr")
TRAIN, HELDOUT = "train", "heldout"

# report table -> {column: tracker metric}; per-task pass rates and stage seconds are added by name
TRAIN_METRICS = {
    "reward": {"reward_mean": "train/reward_mean", "train_accuracy": "train/accuracy", "format_ok": "train/format_ok"},
    "length": {"mean_tokens": "rollout/mean_tokens", "max_tokens": "rollout/max_tokens", "truncated": "rollout/truncated"},
    "updates": {
        "entropy": "update/entropy",
        "kl": "update/kl",
        "approx_kl": "update/approx_kl",
        "clip_frac_low": "update/clip_frac_low",
        "clip_frac_high": "update/clip_frac_high",
        "logprob_diff_mean": "update/logprob_diff_mean",
        "logprob_diff_max": "update/logprob_diff_max",
        "groups_used": "update/groups_used",
        "groups_dropped": "update/groups_dropped",
    },
    "signal": {"groups": "groups/total", "signal_groups": "groups/with_signal"},
}
HELDOUT_METRICS = {"heldout": {"accuracy": "heldout/accuracy", "responses": "heldout/responses"}}
STAGE_PART = {"rollout": TRAIN, "verify": TRAIN, "update": TRAIN, "evaluate": HELDOUT}


@dataclass(frozen=True)
class Part:
    """What one tracker step gets from one kind of stage."""

    step: int
    kind: str  # TRAIN or HELDOUT
    metrics: dict[str, float]
    responses: list[dict]  # TRAIN only: the iteration's first responses (RESPONSE_COLUMNS)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.step}"


def _metrics(tables: dict[str, list[dict]], spec: dict[str, dict[str, str]], step: int) -> dict[str, float]:
    out = {}
    for table, columns in spec.items():
        for row in (r for r in tables[table] if r["iteration"] == step):
            out |= {name: float(row[col]) for col, name in columns.items() if row[col] is not None}
    return out


def committed_parts(data: ReportData) -> list[Part]:
    """Every part whose stages are committed, by step (no responses yet: `with_responses` adds them)."""
    tables = data.tables
    seconds: dict[tuple[str, int], dict[str, float]] = {}
    for r in data.stages:
        if r["committed"] and r["iteration"] != "":
            seconds.setdefault((STAGE_PART[r["stage"]], r["iteration"]), {})[f"seconds/{r['stage']}"] = float(r["seconds"])
    parts = []
    for i in sorted({r["iteration"] for r in tables["updates"]}):  # update(i) committed: so are rollout(i), verify(i)
        m = _metrics(tables, TRAIN_METRICS, i)
        m |= {f"train/pass_rate/{r['task']}": float(r["pass_rate"]) for r in tables["tasks"] if r["iteration"] == i}
        parts.append(Part(i, TRAIN, m | seconds.get((TRAIN, i), {}), []))
    for i in sorted({r["iteration"] for r in tables["heldout"]}):
        m = _metrics(tables, HELDOUT_METRICS, i)
        m |= {f"heldout/pass_rate/{r['task']}": float(r["pass_rate"]) for r in tables["eval_tasks"] if r["iteration"] == i}
        parts.append(Part(i, HELDOUT, m | seconds.get((HELDOUT, i), {}), []))
    return sorted(parts, key=lambda p: (p.step, p.kind != HELDOUT))  # v_i's evaluation ran before iteration i


def with_responses(run_dir: str | Path, parts: list[Part], limit: int) -> list[Part]:
    """TRAIN parts with their iteration's first `limit` responses (the report's responses query)."""
    if limit == 0 or not any(p.kind == TRAIN for p in parts):
        return parts
    con = connect_run(run_dir)
    try:
        out = []
        for p in parts:
            if p.kind == TRAIN:
                rows = con.sql(QUERIES["responses"], params={"limit": limit, "iteration": p.step}).to_arrow_table().to_pylist()
                p = Part(p.step, p.kind, p.metrics, [{c: r[c] for c in RESPONSE_COLUMNS} for r in rows])
            out.append(p)
        return out
    finally:
        con.close()


# ---- where the parts go, and what was sent there ------------------------------------------------


def target(run: Run, settings: TrackingSection) -> Target:
    """The destination `settings` names for this run (defaults: folders inside the run's tracking/)."""
    paths, name = run.paths, settings.run_name or run.paths.root.name
    common = {"name": name, "config": run.data, "location": paths.location}
    if settings.backend == "tensorboard":
        where = Path(settings.tensorboard_dir or paths.tracking / "tensorboard").resolve() / name
        return Target("tensorboard", str(where), "", **common)
    if settings.backend == "mlflow":
        uri = settings.mlflow_uri or os.environ.get("MLFLOW_TRACKING_URI", "")
        if not uri:
            raise TrackingError(
                "tracking.backend = 'mlflow' needs a tracking server: set tracking.mlflow_uri (e.g. "
                "--set tracking.mlflow_uri=http://127.0.0.1:5000) or MLFLOW_TRACKING_URI"
            )
        return Target("mlflow", uri, settings.mlflow_experiment, **common)
    if settings.backend == "wandb":
        where = Path(settings.wandb_dir or paths.tracking).resolve()
        return Target("wandb", str(where), settings.wandb_project, **common)
    raise TrackingError(f"tracking.backend = {settings.backend!r} sends nothing; name tensorboard, mlflow or wandb")


def state_path(paths: RunPaths, t: Target) -> Path:
    digest = hashlib.sha256(json.dumps([t.label, t.name]).encode()).hexdigest()[:12]
    return paths.tracking / f"{t.backend}-{digest}.json"


def read_state(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError:
        raise TrackingError(f"{path} is not valid JSON: delete it to send every step again (into a new tracker run)") from None


_OPEN: dict[Path, Tracker] = {}  # state file -> the tracker this process keeps open (one W&B session per process)


def close_trackers() -> None:
    """Close every tracker this process opened (the flow's end; also at exit)."""
    while _OPEN:
        _, tracker = _OPEN.popitem()
        tracker.close()


atexit.register(close_trackers)


def ensure_trackable(run_dir: str | Path, settings: TrackingSection | None = None) -> Target | None:
    """The destination, checked before a run trains (package installed, URI set, a local run);
    None when tracking is off."""
    run = open_run(run_dir)
    settings = settings or run.config.tracking
    if settings.backend == "none":
        return None
    if run.paths.uri is not None:
        raise TrackingError(
            f"tracking.backend = {settings.backend!r} on {run.paths.uri}: tracking a run on object storage is not "
            "supported (its tracking state would not outlive the process); set tracking.backend = 'none', and replay "
            "a local copy of the run with `rlvr track`"
        )
    t = target(run, settings)
    check_installed(t.backend)
    return t


@dataclass(frozen=True)
class SyncResult:
    target: Target | None
    sent: list[str]  # the parts sent now, e.g. ["heldout:0", "train:0"]
    already: int  # committed parts this destination had already
    state_file: Path | None
    run_id: str | None


def sync(
    run_dir: str | Path, settings: TrackingSection | None = None, *, on_part: Callable[[Part], None] | None = None
) -> SyncResult:
    """Send every committed part the destination has not had yet; settings default to the run's [tracking]."""
    t = ensure_trackable(run_dir, settings)
    if t is None:
        return SyncResult(None, [], 0, None, None)
    run = open_run(run_dir)
    settings = settings or run.config.tracking
    path = state_path(run.paths, t)
    state = read_state(path)
    sent = set(state.get("sent", []))
    parts = committed_parts(collect(run_dir, responses=0))
    todo = with_responses(run_dir, [p for p in parts if p.key not in sent], settings.responses)
    if todo:
        if path not in _OPEN:
            _OPEN[path] = open_tracker(t, state.get("tracker", {}))
            state |= {"destination": t.label, "name": t.name, "tracker": _OPEN[path].state()}
            write_text_atomic(path, json.dumps(state, indent=1))  # the tracker run's id, before anything goes to it
        tracker = _OPEN[path]
        durable = getattr(tracker, "durable", True)
        for p in todo:
            tracker.log(p.step, p.metrics, p.responses)
            tracker.flush()
            sent.add(p.key)
            if durable:
                state |= {"sent": sorted(sent, key=_order), "tracker": tracker.state()}
                write_text_atomic(path, json.dumps(state, indent=1))
            if on_part is not None:
                on_part(p)
        if not durable:  # W&B writes its offline file as a session finishes: only then is anything sent
            _OPEN.pop(path).close()
            state |= {"sent": sorted(sent, key=_order), "tracker": tracker.state()}
            write_text_atomic(path, json.dumps(state, indent=1))
    return SyncResult(t, [p.key for p in todo], len(parts) - len(todo), path, state.get("tracker", {}).get("run_id"))


def _order(key: str) -> tuple[int, str]:
    kind, step = key.split(":")
    return int(step), kind
