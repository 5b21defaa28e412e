"""bench/scale.py at its smallest, on the tiny recipe: two pinned workers, the two sides of the rollout and of
the update, the JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the bench pins its two workers to cores 0 and 1")
def test_bench_scale_smallest(tmp_path: Path, tiny_model: Path) -> None:
    out = tmp_path / "scale.json"
    cmd = [sys.executable, str(ROOT / "bench" / "scale.py"), "--recipe", str(ROOT / "recipes" / "tiny-demo.toml")]
    cmd += ["--prompts", "2", "--max-new-tokens", "4", "--repeats", "1", "--update-repeats", "1", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["figures"]["rollout_2workers_ratio"] > 0 and len(got["repeats"]) == 2
    for r in got["repeats"]:
        assert r["rows"][0] == r["rows"][1] > 0  # both sides sampled the same number of responses
        assert r["tokens"][0] == r["tokens"][1]  # and the same tokens (the transformers engine: seeds decide)
    assert f"rollout_2workers_ratio: {got['figures']['rollout_2workers_ratio']}" in done.stdout
    (u,) = got["update_repeats"]
    assert u["world_size"] == [1, 2] and u["sequences"][0] == u["sequences"][1]  # one step, on one node or two
    assert got["figures"]["update_2nodes_ratio"] == u["ratio"] > 0
    if u["sequences"][0]:  # a step ran (the tiny recipe's groups may all be equal: then there is none)
        assert got["figures"]["update_2nodes_step_ratio"] == u["step_ratio"] > 0
    for side, total in (("one_node", u["one_node_s"]), ("two_nodes", u["two_nodes_s"])):  # the split adds up
        split = u[side]
        assert set(split) == {"start_s", "load_s", "step_s", "save_s"} and min(split.values()) >= 0, split
        assert sum(split.values()) == pytest.approx(total, abs=0.05)
    assert got["figures"]["update_2nodes_ratio_loaded"] == u["loaded_ratio"] > 0  # the baseline with both cores busy
    assert u["loaded_ratio"] == pytest.approx(u["one_node_loaded_s"] / u["two_nodes_s"], abs=0.002)
    for kind in ("compute", "memory"):  # how much one core's work slows the other's
        p = got["probes"][kind]
        assert p["alone_s"] > 0 and p["slowdown"] == pytest.approx(p["both_s"] / p["alone_s"], abs=0.002)
    v = got["verify"]
    assert v["rows"][0] == v["rows"][1] == sum(v["part_rows"]) > 0  # verify in two parts scored every row once
    f = got["figures"]
    added = f["rollout_1worker_s"] + f["verify_1worker_s"] + f["update_1node_s"]
    assert f["iteration_1x1_s"] == pytest.approx(added, abs=0.02)
    assert f["iteration_2x2_ratio"] == pytest.approx(f["iteration_1x1_s"] / f["iteration_2x2_s"], abs=0.002)
