"""bench/weights.py at its smallest, on the tiny recipe: two updates, the pairs' sizes and deltas, the JSON,
and the figures' arithmetic (bf16 is half of fp32, traffic is one upload plus K downloads)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_bench_weights_smallest(tmp_path: Path, tiny_model: Path) -> None:
    out = tmp_path / "weights.json"
    cmd = [sys.executable, str(ROOT / "bench" / "weights.py"), "--recipe", str(ROOT / "recipes" / "tiny-demo.toml")]
    cmd += ["--prompts", "2", "--max-new-tokens", "8", "--workers", "1,3", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    got = json.loads(out.read_text())
    assert [(p["from"], p["to"]) for p in got["pairs"]] == [(0, 1), (1, 2)]
    for p in got["pairs"]:
        d = p["delta"]
        assert p["version_bytes"] == sum(p["files"].values())
        assert (
            p["weights_bytes"] == p["files"]["model.safetensors"] and p["trainer_state_bytes"] == p["files"]["trainer_state.pt"]
        )
        # the safetensors file is its tensors plus a header; a bf16 copy is half the tensors plus its header
        assert d["bf16_tensor_bytes"] * 2 == d["fp32_tensor_bytes"] == d["elements"] * 4
        assert 0 < p["weights_bytes"] - d["fp32_tensor_bytes"] < 100_000
        assert 0 < p["bf16_copy_bytes"] - d["bf16_tensor_bytes"] < 100_000
        assert 0 <= d["bf16_changed"] <= d["fp32_changed"] <= d["elements"]  # a bf16 bit flips only if an fp32 bit did
        for f in ("fp32_changed_fraction", "bf16_changed_fraction"):
            assert 0.0 <= d[f] <= 1.0
        assert d["sparse_delta_bytes"] == 6 * d["bf16_changed"] and p["sha256_mb_per_s"] > 0
        assert 0 < d["bf16_xor_zstd_bytes"] <= d["bf16_tensor_bytes"] and 0 < d["fp32_xor_zstd_bytes"]
        # the worker's cache holds v_i: it downloads the changed files an engine reads, the weights when a bit moved
        assert "trainer_state.pt" not in p["downloaded_files"] and "tokenizer.json" not in p["downloaded_files"]
        assert ("model.safetensors" in p["downloaded_files"]) == (d["fp32_changed"] > 0)
        assert p["download_per_worker_bytes"] == sum(p["files"][n] for n in p["downloaded_files"])
        t = p["traffic_per_iteration_bytes"]
        assert sorted(t) == ["1", "3"]
        for k in (1, 3):
            assert t[str(k)]["weights_only"] == p["version_bytes"] + k * p["download_per_worker_bytes"]
            state = p["trainer_state_bytes"]
            assert t[str(k)]["whole_version"] == t[str(k)]["weights_only"] + k * state
            assert t[str(k)]["bf16_copy"] == p["version_bytes"] + (k + 1) * p["bf16_copy_bytes"]
    last = got["pairs"][-1]
    assert last["delta"]["fp32_changed"] > 0  # the tiny recipe's lr (1e-3) moves the weights within two updates
    assert got["figures"]["bf16_changed_fraction"] == last["delta"]["bf16_changed_fraction"]
    assert f"version_bytes: {last['version_bytes']}" in done.stdout
