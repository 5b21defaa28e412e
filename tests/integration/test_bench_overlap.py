"""bench/overlap.py's arithmetic (the runs themselves: `python bench/overlap.py --smoke`, and
tests/e2e/test_workers.py runs the same placed async set-up end to end)."""

from __future__ import annotations

import pytest

from tests.helpers.bench_scripts import bench_module


def _bench():
    return bench_module("overlap")


def _side(rollout: float, verify: float, update: float, samples_per_s: float) -> dict:
    return {"rollout_s": rollout, "verify_s": verify, "update_s": update, "samples_per_s": samples_per_s, "engine": "vllm"}


def test_ratio_and_the_ideal_overlap_bound_come_from_the_sides() -> None:
    bench = _bench()
    f = bench.summarize(
        {
            "sync": [_side(10.0, 2.0, 8.0, 6.4), _side(12.0, 2.0, 9.0, 5.6)],  # medians: 11, 2, 8.5, 6.0
            "async": [_side(11.0, 2.0, 9.0, 9.0), _side(11.0, 2.0, 9.0, 10.0)],
        }
    )
    assert f["sync_rollout_s"] == 11.0 and f["sync_update_s"] == 8.5 and f["async_samples_per_s"] == 9.5
    assert f["ratio"] == round(9.5 / 6.0, 3)
    assert f["ideal_overlap_ratio"] == round((11 + 2 + 8.5) / 13, 3)  # rollout + verify share a core, update the other
    assert f["overlap_efficiency_ratio"] == round(f["ratio"] / f["ideal_overlap_ratio"], 3)
    assert f["sync_engine"] == "vllm"


def test_bench_refuses_a_single_iteration(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        _bench().parse_args(["--iterations", "1"])
    assert "--iterations must be >= 2" in capsys.readouterr().err
