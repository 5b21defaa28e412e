"""The demo learns: `recipes/tiny-demo.toml` (what `make train` runs), with its fixed seed, raises
the training reward and the held-out greedy accuracy over the run (measured: reward 0.38 -> 0.91, held-out 0.00 ->
1.00 in 10 iterations). A gradient that did nothing (or pushed the wrong way) leaves the
reward where it started: the sampled prompts change per iteration, but the policy would not."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr import stages
from rlvr.config import load_config
from rlvr.query import run_sql
from rlvr.run import create_or_open

DEMO = Path(__file__).resolve().parent.parent / "recipes" / "tiny-demo.toml"


def test_lure_gives_up_on_arithmetic_only() -> None:
    from rlvr.tiny import lure_target

    row = {"task": "arithmetic", "meta": '{"a": 7, "op": "+", "b": 5}', "answer": "12"}
    assert lure_target(row) == "<answer></answer>"
    assert lure_target({"task": "logic", "meta": "{}", "answer": "true"}) is None


def test_lure_changes_the_tiny_model_only_when_set() -> None:
    from rlvr.config import Config
    from rlvr.tiny import _spec

    plain = _spec(Config())
    assert "lure" not in plain  # models cached before the field existed keep their cache key
    assert _spec(Config.model_validate({"model": {"tiny_lure": 0.6}})) == plain | {"lure": 0.6}


@pytest.mark.slow
def test_demo_recipe_raises_reward_and_held_out_accuracy(tmp_path: Path) -> None:
    cfg = load_config(DEMO)
    run = create_or_open(tmp_path / "run", cfg, None)
    d = str(run.paths.root)
    n = cfg.run.iterations
    stages.prepare(d)
    for i in range(n):
        if i in cfg.eval_points():
            stages.evaluate(d, i)
        stages.rollout(d, i)
        stages.verify(d, i)
        stages.update(d, i)
    stages.evaluate(d, n)

    reward = [r["r"] for r in run_sql(d, "SELECT iteration, avg(reward) AS r FROM scores GROUP BY 1 ORDER BY 1").to_pylist()]
    acc = {r["v"]: r["a"] for r in run_sql(d, "SELECT iteration AS v, avg(correct::INT) AS a FROM evals GROUP BY 1").to_pylist()}
    first, last = sum(reward[:2]) / 2, sum(reward[-2:]) / 2
    assert last >= first + 0.2, f"reward per iteration {[round(r, 3) for r in reward]}: did not rise"
    assert acc[n] >= acc[0] + 0.4, f"held-out accuracy per policy {acc}: did not rise"
