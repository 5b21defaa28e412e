"""bench/learning.py evaluates both sides by one path: rlvr's own evaluate stage.

A policy held in memory (how TRL's side is evaluated) scores exactly what the run's own evals say
for the same policy, on the rendered held-out prompts.

    .venv/bin/python -m pytest -q tests/integration/test_bench_learning.py
"""

from __future__ import annotations

from pathlib import Path

import torch

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.models.load import load_policy
from tests.helpers.bench_scripts import bench_module


def test_a_model_in_memory_scores_what_the_runs_evals_say(small_config: Config, tiny_model: Path, tmp_path: Path) -> None:
    learning = bench_module("learning")
    data = small_config.model_dump()
    data["eval"].update(prompts=12)
    data["update"].update(lr=3e-3)
    cfg = Config.model_validate(data)
    d = tmp_path / "run"
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    for stage in (stages.rollout, stages.verify, stages.update):
        stage(d, 0)
    for i in (0, 1):
        own = learning.held_out_accuracy(d, i)
        model, tok = load_policy(d / f"policy/v00000{i}", torch.device("cpu"))
        assert learning.evaluate_model(model, tok, cfg, tmp_path / f"eval{i}") == own, i


def _result(seed_sides: dict[int, dict[str, list[float]]], **settings) -> dict:
    """A results file of bench/learning.py as its main() writes one: per seed, each side's curve."""
    per_seed = []
    for seed, sides in seed_sides.items():
        curves = {
            name: {
                "curve": [{"iteration": 5 * k, "train_s": 60.0 * k, "accuracy": a} for k, a in enumerate(accs)],
                "iterations": 5,
            }
            for name, accs in sides.items()
        }
        per_seed.append({"seed": seed, "figures": {}, "sides": curves})
    base = {"recipe": "recipes/r.toml", "minutes": 30.0, "eval_prompts": 100, "trl_gradient_checkpointing": False, "config": {}}
    return {"smoke": False, "per_seed": per_seed, "machine": {}, "versions": {}, "settings": base | settings | {"command": "c"}}


def test_combine_merges_seeds_and_sides_run_apart_and_recomputes_the_figures(tmp_path: Path) -> None:
    import json

    import pytest

    learning = bench_module("learning")
    files = {
        "a": _result({0: {"rlvr": [0.3, 0.4, 0.45], "trl": [0.3, 0.3, 0.35]}}),
        "b": _result({1: {"rlvr": [0.2, 0.3, 0.5]}}),
        "c": _result({1: {"trl": [0.2, 0.5, 0.4]}}),
    }
    for name, data in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    paths = [tmp_path / f"{n}.json" for n in files]
    out = learning.combine(paths, tmp_path / "all.json")
    assert json.loads((tmp_path / "all.json").read_text()) == out
    assert [s["seed"] for s in out["per_seed"]] == [0, 1] and set(out["per_seed"][1]["sides"]) == {"rlvr", "trl"}
    one = out["per_seed"][1]["figures"]
    assert one["base_accuracy"] == 0.2 and one["rlvr_gain"] == 0.3 and one["trl_gain"] == 0.3
    assert one["rlvr_to_reach_trl_best_s"] == 120.0 and one["time_to_trl_best_ratio"] == 2.0  # TRL got to 0.5 at 60 s
    assert out["figures"]["seeds"] == 2 and out["figures"]["rlvr_gain"] == pytest.approx((0.15 + 0.3) / 2)
    assert out["settings"]["minutes"] == 30.0 and len(out["settings"]["combined"]) == 3

    (tmp_path / "d.json").write_text(json.dumps(_result({2: {"rlvr": [0.3, 0.4]}}, minutes=15.0)))
    with pytest.raises(SystemExit, match=r"d.json has another settings.minutes than .*a.json"):
        learning.combine([paths[0], tmp_path / "d.json"], tmp_path / "x.json")
    with pytest.raises(SystemExit, match="seed 1's rlvr side is in .*b.json and in an earlier file"):
        learning.combine([paths[1], paths[1]], tmp_path / "x.json")
    (tmp_path / "e.json").write_text(json.dumps(_result({1: {"trl": [0.25, 0.3]}})))
    with pytest.raises(SystemExit, match=r"seed 1's sides start from different v0 accuracies \[0.2, 0.25\]"):
        learning.combine([paths[1], tmp_path / "e.json"], tmp_path / "x.json")
