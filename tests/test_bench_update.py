"""bench/update.py at its smallest: it runs, prints the BENCH.md keys and writes valid JSON.

Skipped without trl (a bench-only extra: pip install -e ".[bench]").
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KEYS = ["ours_tokens_per_s", "trl_tokens_per_s", "ratio", "ours_peak_mb", "trl_peak_mb", "ours_s", "trl_s"]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("trl") is None, reason='trl is not installed: it is a bench-only extra (pip install -e ".[bench]")'
)


def test_bench_update_smallest(tmp_path: Path) -> None:
    out = tmp_path / "update.json"
    cmd = [sys.executable, str(ROOT / "bench" / "update.py"), "--layers", "1", "--hidden", "64", "--vocab", "512",
           "--prompts", "2", "--group", "4", "--prompt-len", "16", "--completion-len", "24", "--trl-batch", "4",
           "--repeats", "1", "--out", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    printed = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    for key in KEYS:
        assert key in printed, f"{key} missing from the printed figures:\n{proc.stdout}"
        assert float(printed[key]) > 0, f"{key}: {printed[key]}"
    result = json.loads(out.read_text())
    figures = result["figures"]
    assert {k: str(figures[k]) for k in KEYS} == {k: printed[k] for k in KEYS}
    assert figures["ratio"] == pytest.approx(figures["trl_s"] / figures["ours_s"], rel=0.05)  # both rounded
    # same weights and batch before the first step: both sides must compute the same loss and gradient
    assert figures["loss_abs_diff"] < 1e-5
    assert figures["grad_norm_rel_diff"] < 1e-3
    assert result["settings"]["trl"]["loss_type"] == "dapo" and result["settings"]["ours"]["aggregation"] == "token_mean"
    assert result["workers"]["trl"]["gradient_checkpointing"] is True  # TRL's default, as the benchmark claims
    assert result["machine"]["cores"] >= 1 and result["versions"]["trl"]
    assert len(result["runs"]["ours"]) == len(result["runs"]["trl"]) == 2  # warm-up + 1 repeat, alternated
