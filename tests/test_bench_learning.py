"""bench/learning.py evaluates both sides by one path: rlvr's own evaluate stage.

A policy held in memory (how TRL's side is evaluated) scores exactly what the run's own evals say
for the same policy, on the rendered held-out prompts.

    .venv/bin/python -m pytest -q tests/test_bench_learning.py
"""

from __future__ import annotations

from pathlib import Path

import torch
from bench_scripts import bench_module

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.models.load import load_policy


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
