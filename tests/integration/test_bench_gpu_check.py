"""bench/gpu_check.py (scripts/gpu-check.sh's check) as a CPU dry run: the bf16 step against the fp32
reference on the same rows, its figures in the JSON, and the exit code that says whether it held."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_gpu_check_dry_run_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "g.json"
    cmd = [sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--device", "cpu", "--models", "tiny"]
    cmd += ["--steps", "1", "--prompts", "2", "--group", "4", "--completion-len", "16", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads(out.read_text())
    tiny = got["figures"]["tiny"]
    assert tiny["within_tolerance"] and tiny["loss_gap"] <= got["tolerance"] * max(1.0, abs(tiny["loss_fp32_cpu"]))
    assert tiny["loss_bf16"] != tiny["loss_fp32_cpu"]  # the bf16 side really ran in bf16
    # the logprobs the ratio is made of, and the gradient, agree too (the first step's loss is ~0)
    assert 0 < tiny["max_token_logprob_gap"] and tiny["mean_logprob_gap"] <= got["tolerance"] * max(
        1.0, abs(tiny["mean_logprob_fp32_cpu"])
    )
    assert (
        tiny["mean_logprob_fp32_cpu"] < -1
        and tiny["grad_norm_fp32_cpu"] > 0
        and tiny["grad_norm_rel_gap"] <= 5 * got["tolerance"]
    )
    assert tiny["tokens_per_s_bf16"] > 0 and tiny["peak_mb_bf16"] > 0
    assert f"tiny_loss_gap: {tiny['loss_gap']}" in done.stdout
