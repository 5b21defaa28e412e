"""bench/placed.py at its smallest, on the tiny recipe: one iteration in one process and on four workers, the
same stages committed both ways, and the figures' arithmetic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT


def test_bench_placed_smallest(tmp_path: Path, tiny_model: Path) -> None:
    out = tmp_path / "placed.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "placed.py"),
        "--iterations",
        "1",
        "--prompts",
        "2",
        "--repeats",
        "1",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    got = json.loads(out.read_text())
    (r,) = got["repeats"]
    one, placed, f = r["one_process"], r["placed"], got["figures"]
    assert one["stages"] == placed["stages"] > 0 and one["parts"] == placed["parts"] > 0  # the same stages, both ways
    assert set(got["workers_that_committed"]) & {"gen-a", "gen-b"} and set(got["workers_that_committed"]) & {"train-a", "train-b"}
    for side in (one, placed):
        assert side["wall_s"] > 0 and side["work_s"] > 0
        assert side["orchestration_s"] == pytest.approx(side["wall_s"] - side["work_s"], abs=0.02)
        assert sum(side["waits_by_stage_s"].values()) <= side["wall_s"]
    runs = placed["stages"] + placed["parts"]
    assert f["placed_stage_runs"] == runs and f["placed_orchestration_s"] == placed["orchestration_s"]
    per_stage = (placed["orchestration_s"] - one["orchestration_s"]) / runs
    assert f["placed_overhead_per_stage_s"] == r["overhead_per_stage_s"] == pytest.approx(per_stage, abs=0.01)
    assert f"placed_overhead_per_stage_s: {f['placed_overhead_per_stage_s']}" in done.stdout
