"""Progress of the stages on the tiny model: rollout, verify, update and evaluate report
done/total from zero to total through the `rlvr.progress` logger. The CLI's bars:
tests/unit/views/test_progress.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.progress import PROGRESS, Progress

pytestmark = pytest.mark.slow


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[Progress] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append(record.rlvr_progress)


def test_every_stage_reports_progress_from_zero_to_total(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["rollout"] |= {"batch_size": 16}  # 16 prompts x G=4 = 64 responses in 4 batches
    data["eval"] = {"every": 1, "prompts": 8}
    d = tmp_path / "run"
    create_or_open(d, Config.model_validate(data), 1)
    stages.prepare(d)
    seen = Collect()
    PROGRESS.addHandler(seen)
    try:
        for stage in (stages.evaluate, stages.rollout, stages.verify, stages.update):
            stage(d, 0)
    finally:
        PROGRESS.removeHandler(seen)
    by_stage: dict[str, list[Progress]] = {}
    for e in seen.events:
        by_stage.setdefault(e.stage, []).append(e)
    assert set(by_stage) == {"evaluate", "rollout", "verify", "update"}
    for stage, events in by_stage.items():
        done = [e.done for e in events]
        assert done[0] == 0 and done[-1] == events[-1].total > 0 and done == sorted(done), (stage, done)
        assert {e.iteration for e in events} == {0}
    assert [e.done for e in by_stage["rollout"]] == [0, 16, 32, 48, 64] and by_stage["rollout"][0].unit == "responses"
    assert by_stage["evaluate"][-1].total == 8 and by_stage["verify"][-1].total == 64
    assert by_stage["update"][0].unit == "sequences" and len(by_stage["update"]) >= 2
