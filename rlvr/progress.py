"""Progress of a running stage, as log records: rollout, verify, update and evaluate call
`progress(...)` as work completes; whoever wants bars (the `rlvr` CLI) attaches a handler to the
`rlvr.progress` logger and reads `record.rlvr_progress`. Nothing is shown, and nearly nothing
costs, when no handler listens. Logging rather than a callback argument: stages keep their
signatures (`rollout(run, i)`), work unchanged under Prefect, and rlvr/ imports no UI.

    progress("rollout", 3, done=128, total=256, unit="responses")
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

PROGRESS = logging.getLogger("rlvr.progress")
PROGRESS.propagate = False  # not a log line: the flow logs keep their own per-batch lines
PROGRESS.setLevel(logging.INFO)


@dataclass(frozen=True)
class Progress:
    stage: str
    iteration: int
    done: int  # units finished so far in this stage attempt
    total: int
    unit: str  # "responses", "rows", "sequences"


def progress(stage: str, iteration: int, *, done: int, total: int, unit: str) -> None:
    if PROGRESS.hasHandlers():
        PROGRESS.info(
            "%s %d: %d/%d %s",
            stage,
            iteration,
            done,
            total,
            unit,
            extra={"rlvr_progress": Progress(stage, iteration, done, total, unit)},
        )


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"
