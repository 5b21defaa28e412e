"""bench/gpu.py (scripts/gpu-check.sh's benchmark) as a CPU dry run of every path but TRL's: the shape's
sides through bench/update.py, MFU from the model FLOPs, the micro-batches used, the rollout engine's
tokens/s, and the JSON. The FLOPs formula by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import gpu as bench_gpu


def test_step_flops_by_hand() -> None:
    conf = {
        "hidden_size": 4,
        "num_hidden_layers": 2,
        "vocab_size": 10,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "intermediate_size": 8,
    }
    # a layer: q and o 2 * 16, k and v 2 * 4 * 2 (one kv head of width 2), MLP 3 * 4 * 8 = 144 weights
    per_layer = 32 + 16 + 96
    rows = [[3, 2], [1, 5]]
    want = sum(6 * 2 * per_layer * (p + r) + 6 * 2 * 4 * (p + r) ** 2 + 6 * 4 * 10 * r for p, r in rows)
    assert bench_gpu.step_flops(rows, conf) == want


@pytest.mark.parametrize(
    ("name", "tflops"),
    [
        ("NVIDIA H100 80GB HBM3", 989.4),
        ("NVIDIA H100 PCIe", 756.0),
        ("NVIDIA H200", 989.4),
        ("NVIDIA A100-SXM4-80GB", 312.0),
        ("Tesla T4", None),
    ],
)
def test_peak_by_card_name(name: str, tflops: float | None) -> None:
    assert bench_gpu.peak_tflops(name)[0] == tflops


def test_gpu_bench_dry_run_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "g.json"
    cmd = [sys.executable, str(ROOT / "bench" / "gpu.py"), "--device", "cpu", "--shapes", "tiny", "--steps", "1", "--no-trl"]
    cmd += ["--peak-tflops", "1", "--rollout-prompts", "2", "--rollout-tokens", "4", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    got = json.loads(out.read_text())
    tiny = got["shapes"]["tiny"]
    assert got["trl"] == "--no-trl" and got["peak_bf16_dense_tflops"] == 1
    for side in ("ours_auto", "ours_auto_bf16"):
        tps = tiny[f"{side}_tokens_per_s"]
        assert tps > 0 and tiny[f"{side}_peak_mb"] > 0
        # MFU: the step's model FLOPs over its seconds, against the given peak of 1 TFLOP/s
        assert tiny[f"{side}_mfu"] == pytest.approx(tiny["step_model_tflop"] * tps / tiny["completion_tokens"], rel=0.02)
        assert tiny[f"{side}_micro_batch_tokens"] == 512  # "auto" on the CPU
        assert tiny[f"{side}_micro_batches"] >= 1
    assert got["rollout_transformers"]["tokens"] == 2 * 4 and got["rollout_transformers"]["tokens_per_s"] > 0
    assert got["goals"] == {}  # the tiny shape has no goal
    assert f"tiny_ours_auto_tokens_per_s: {tiny['ours_auto_tokens_per_s']}" in done.stdout


def test_gpu_check_script_refuses_without_a_gpu_for_either_check() -> None:
    if subprocess.run("nvidia-smi -L", shell=True, capture_output=True).returncode == 0:
        pytest.skip("this machine has a GPU: the script would run the check")
    for what in ([], ["bf16"]):
        done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-check.sh"), *what], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "no NVIDIA GPU" in done.stderr
