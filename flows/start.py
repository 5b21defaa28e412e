"""Every check before a run's flow starts, in one function: `rlvr train`, `rlvr resume` and
`python -m rlvr.flows.train` all call `check_start`, so a run started any of these ways is refused
for the same reasons, in one line, before Prefect runs a stage.

It lives in flows/, not in rlvr/checks/: two of its checks read layers above rlvr.checks (what is
pending: rlvr.stages.lineage; the tracker: rlvr.views.track) and one asks Prefect (a placed run's
server), and the library never imports upward or imports Prefect (tests/unit/project/test_layers.py).

Test: pytest tests/unit/checks/test_start.py tests/unit/checks/test_preflight.py
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path


def check_start(
    run_dir: str | Path, *, checked_new: bool = False, note: Callable[[str], None] = print
) -> list[tuple[str, int | None]]:
    """The stages still to compute, after every check a run must pass before its flow starts; []
    when every stage is committed (then nothing else is checked: a finished run on a read-only disk
    resumes to exit 0). Raises an RlvrError naming the fix otherwise.

    checked_new: the run's config was just checked by create_or_open (a new or replaced config), so
    its model and task are not read again. note: where the model check's notes go.
    """
    from rlvr.checks.preflight import check_device
    from rlvr.stages.lineage import pending
    from rlvr.store.locks import refuse_if_served, writer_lock
    from rlvr.store.run import RunError, open_run, started
    from rlvr.views.track import ensure_trackable

    refuse_if_served(run_dir)
    run = open_run(run_dir)
    if not checked_new and not started(run.paths):
        _check_unstarted(run, note)
    _check_store(run_dir, run)
    todo = pending(run)
    if not todo:
        return []
    if not os.access(run.paths.root, os.W_OK | os.X_OK):
        stage, i = todo[0]
        raise RunError(
            f"{run_dir} is not writable (read-only disk or permissions) and {len(todo)} stage(s) are still to "
            f"compute, from {stage}{'' if i is None else f' {i}'}: copy the run to a writable disk and resume it there"
        )
    if any(run.config.placement.pool(s) is None for s in ("rollout", "update", "evaluate")):
        check_device(run.config)  # a stage that uses the device runs here (placed ones: on their workers)
    with writer_lock(run.paths.location):  # a second writer is refused now, not after Prefect's start (the flow locks again)
        pass
    ensure_trackable(run_dir)  # [tracking]: its package installed, an MLflow URI, a local run
    prefect_env()
    _check_placement(str(run_dir), run)
    return todo


def _check_unstarted(run, note: Callable[[str], None]) -> None:
    """A run that committed nothing yet (a first start that failed) gets the checks of a new one
    (rlvr.checks.preflight): its model and task are read only inside the flow."""
    from rlvr.checks.preflight import check_model, check_task
    from rlvr.models.registry import model_folder

    folder = model_folder(run.config)
    for msg in check_model(folder) if folder is not None else []:
        note(msg)
    check_task(run.config)


def _check_store(run_dir: str | Path, run) -> None:
    """Committed files that no longer match their records stop the run before any stage (on object
    storage: their sizes and ETags; the bytes are hashed when a stage downloads them)."""
    from rlvr.store.integrity import check_store, summary
    from rlvr.store.records import IntegrityError

    problems, _ = check_store(run_dir, download=False)
    if problems:
        raise IntegrityError(summary(problems, run_dir, run.config))


def _check_placement(run_dir: str, run) -> None:
    """A run whose [placement] sends stages to workers needs a Prefect server they reach too (the
    driver's own temporary one is private to it); refused when none answers."""
    placed = run.config.placement.placed()
    if not placed:
        return
    from prefect.settings import PREFECT_API_URL
    from rlvr.flows.serve import reachable_server

    where = ", ".join(f"{stage} to pool {pool!r}" for stage, pool in placed.items())
    reachable_server(
        PREFECT_API_URL.value(),
        needs=f"[placement] sends {where}; the workers take them from a Prefect server (PREFECT_API_URL is not set)",
        command=f"rlvr resume {run_dir}",
    )


def prefect_env() -> None:
    """Prefect's settings for a run, set before Prefect reads them."""
    # A temporary Prefect server starts with the first flow; on 2 cores it can need > 20 s.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "rlvr")  # stage progress in the flow logs
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # offline machines: no telemetry errors
    logging.getLogger("rlvr").setLevel(logging.INFO)
