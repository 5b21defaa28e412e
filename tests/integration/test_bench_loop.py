"""bench/loop.py's FLOP accounting, checked against torch's own FLOP counter on real forward passes.

The fractions of the CPU's ceiling that bench/loop.py reports are only as true as this count:
`ModelFlops.forward(read, predicted)` must equal what the model's matrix multiplies do when it
reads `read` tokens and projects `predicted` of them through the output head.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import LlamaConfig, LlamaForCausalLM

from tests.helpers import ROOT
from tests.helpers.bench_scripts import bench_module


def _loop_module():
    return bench_module("loop")


def _model(tied: bool) -> LlamaForCausalLM:
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=160,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=tied,
        attn_implementation="eager",  # attention as plain matmuls, which the counter sees
    )
    return LlamaForCausalLM(cfg).eval()


@pytest.mark.parametrize("tied", [True, False])
def test_flops_split_body_and_head(tied: bool) -> None:
    flops = _loop_module().ModelFlops.of(_model(tied))
    assert flops.head == 512 * 64  # the output projection, tied or not
    layer = (64 * 64 + 2 * 64 * 32 + 64 * 64) + 3 * 64 * 160  # q, k/v (2 kv heads of 16), o; gate, up, down
    assert flops.body == 2 * layer  # norms are elementwise and the embedding table a lookup: neither is a matmul


@pytest.mark.parametrize("tied", [True, False])
def test_forward_flops_match_torch_counter(tied: bool) -> None:
    model = _model(tied)
    flops = _loop_module().ModelFlops.of(model)
    ids = torch.randint(0, 512, (1, 6))
    for keep in (6, 2):  # logits for every position, and for the last two only (as on response positions)
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(input_ids=ids, logits_to_keep=keep)
        counted = counter.get_total_flops()
        attention = 2 * 2 * 2 * 6 * 6 * 64  # per layer: q k^T and p v over 6 x 6 positions, hidden 64
        assert counted == flops.forward(6, keep) + attention
    assert flops.train(6, 2) == 3 * flops.forward(6, 2)


@pytest.mark.slow
def test_loop_smoke_on_the_rlvr_side(tmp_path: Path, small_config, tiny_model: Path) -> None:
    """bench/loop.py end to end at toy scale, rlvr's side only (TRL's needs the bench extra):
    the tiny model through `rlvr.stages.generation`, the ceiling measured, the JSON's figures consistent
    with the run it kept (its per-step seconds are the `updates` table's)."""
    from rlvr.views.sql import run_sql

    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["rollout"].update(engine="transformers", prompts_per_iteration=8)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(type(small_config).model_validate(data).to_toml())
    out, keep = tmp_path / "loop.json", tmp_path / "runs"
    cmd = [sys.executable, str(ROOT / "bench" / "loop.py"), "--smoke", "--sides", "rlvr", "--recipe", str(recipe)]
    cmd += ["--set", "rollout.prompts_per_iteration=8", "--out", str(out), "--keep", str(keep)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(out.read_text())
    f, rows = result["figures"], result["per_iteration"]["rlvr"]
    assert result["smoke"] is True and f["rlvr_engine"] == "transformers"
    assert f["ceiling_gflop_per_s"] > 0 and 0 < f["rlvr_rollout_ceiling_fraction"] < 1
    assert [r["iteration"] for r in rows] == [0, 1] and all(r["iteration_s"] > 0 and r["samples"] == 8 * 4 for r in rows)
    run = keep / "rlvr" / "rlvr-run"
    for r in rows:
        steps = run_sql(run, f"SELECT seconds FROM updates WHERE iteration = {r['iteration']} ORDER BY step").to_pylist()
        assert r["update_step_s"] == [round(s["seconds"] or 0.0, 2) for s in steps]
        assert r["update_steps_s"] == pytest.approx(sum(s["seconds"] or 0.0 for s in steps), abs=0.01)
