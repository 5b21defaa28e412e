"""The CLI's progress bars: a logging handler on `rlvr.progress` (see rlvr/progress.py) that draws
one rich bar per stage and iteration: done / total, rate, elapsed, ETA.

    with progress_bars(console):
        train_flow(run_dir)
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from rlvr.progress import PROGRESS


class RateColumn(ProgressColumn):
    """Units per second over the bar's recent samples (rich's own speed estimate)."""

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit", "")
        return Text(f"{task.speed:,.1f} {unit}/s" if task.speed else f"- {unit}/s", style="progress.data.speed")


class ProgressBars(logging.Handler):
    """One bar per (stage, iteration); a stage that starts again at 0 (a dynamic-sampling round,
    a retry) restarts its bar."""

    def __init__(self, bars: Progress):
        super().__init__(logging.INFO)
        self.bars = bars
        self.tasks: dict[tuple[str, int], int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        p = getattr(record, "rlvr_progress", None)
        if p is None:
            return
        key = (p.stage, p.iteration)
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(f"{p.stage} {p.iteration}", total=p.total, unit=p.unit)
        elif p.done == 0:
            self.bars.reset(self.tasks[key], total=p.total)
        self.bars.update(self.tasks[key], completed=p.done, total=p.total)


def make_bars(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:>12}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}", markup=False),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


@contextmanager
def progress_bars(console: Console) -> Iterator[ProgressBars]:
    with make_bars(console) as bars:
        handler = ProgressBars(bars)
        PROGRESS.addHandler(handler)
        try:
            yield handler
        finally:
            PROGRESS.removeHandler(handler)
