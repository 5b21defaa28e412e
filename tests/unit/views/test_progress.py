"""The CLI's rich progress bars draw what the stages report through the `rlvr.progress` logger (done,
rate, ETA). The stages' reports on the tiny model: tests/integration/test_progress_stages.py."""

from __future__ import annotations

import pytest
from rich.console import Console
from rlvr.flows.progress import progress_bars

from rlvr.progress import PROGRESS

pytestmark = pytest.mark.slow


def test_progress_bars_show_done_rate_and_eta() -> None:
    from rlvr.progress import progress

    console = Console(record=True, width=130, force_terminal=True, color_system=None)
    with progress_bars(console) as bars:
        progress("rollout", 3, done=0, total=64, unit="responses")
        progress("rollout", 3, done=32, total=64, unit="responses")
        progress("verify", 3, done=0, total=64, unit="rows")
        progress("verify", 3, done=64, total=64, unit="rows")
        progress("rollout", 3, done=0, total=10, unit="responses")  # a new round restarts the bar
        assert len(bars.tasks) == 2
    text = console.export_text()
    assert "rollout 3" in text and "0/10 responses" in text and "64/64 rows" in text
    assert "ETA" in text and "/s" in text
    assert bars not in PROGRESS.handlers  # detached afterwards
