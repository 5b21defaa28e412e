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

from tests.helpers import ROOT

LAYOUTS = ("packed", "padded", "packed-bf16")  # our micro-batch layouts (and bf16 autocast), each its own side of the run
KEYS = ["trl_tokens_per_s", "trl_peak_mb", "trl_s", "bf16_speedup_ours_packed"]
KEYS += [f"ours_{x}_{m}".replace("-", "_") for x in LAYOUTS for m in ("tokens_per_s", "peak_mb", "s")]
KEYS += [f"ratio_ours_{x}".replace("-", "_") for x in LAYOUTS]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("trl") is None, reason='trl is not installed: it is a bench-only extra (pip install -e ".[bench]")'
)


def test_bench_update_smallest(tmp_path: Path) -> None:
    out = tmp_path / "update.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "update.py"),
        "--layers",
        "1",
        "--hidden",
        "64",
        "--vocab",
        "512",
        "--prompts",
        "2",
        "--group",
        "4",
        "--prompt-len",
        "16",
        "--completion-len",
        "24",
        "--trl-batch",
        "4",
        "--repeats",
        "1",
        "--layouts",
        ",".join(LAYOUTS),
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    printed = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    for key in KEYS:
        assert key in printed, f"{key} missing from the printed figures:\n{proc.stdout}"
        assert float(printed[key]) > 0, f"{key}: {printed[key]}"
    result = json.loads(out.read_text())
    figures = result["figures"]
    assert {k: str(figures[k]) for k in KEYS} == {k: printed[k] for k in KEYS}
    # bf16 autocast: the same first step as fp32 within bf16's precision, and the settings say which ran
    assert figures["bf16_loss_abs_diff_ours_packed"] < 0.05 * max(1.0, abs(result["runs"]["ours-packed"][0]["loss"]))
    assert result["settings"]["ours-packed-bf16"]["bf16"] and not result["settings"]["ours-packed"]["bf16"]
    for x in ("packed", "padded"):  # fp32
        # the ratio is of unrounded medians, the times are printed to 1 ms: at this size a step takes
        # a few ms, so the check allows exactly that rounding
        trl_s, ours_s, half = figures["trl_s"], figures[f"ours_{x}_s"], 5e-4
        assert (
            (trl_s - half) / (ours_s + half) * 0.999
            <= figures[f"ratio_ours_{x}"]
            <= (trl_s + half) / max(ours_s - half, 1e-9) * 1.001
        )
        # same weights and batch before the first step: every side must compute the same loss and gradient
        assert figures[f"loss_abs_diff_ours_{x}"] < 1e-5
        assert figures[f"grad_norm_rel_diff_ours_{x}"] < 1e-3
        assert result["settings"][f"ours-{x}"]["aggregation"] == "token_mean"
        assert result["settings"][f"ours-{x}"]["packing"] is (x == "packed")
    assert result["settings"]["trl"]["loss_type"] == "dapo"
    assert result["workers"]["trl"]["gradient_checkpointing"] is True  # TRL's default, as the benchmark claims
    assert result["machine"]["cores"] >= 1 and result["versions"]["trl"]
    assert {side: len(r) for side, r in result["runs"].items()} == {f"ours-{x}": 2 for x in LAYOUTS} | {"trl": 2}  # warm-up + 1
