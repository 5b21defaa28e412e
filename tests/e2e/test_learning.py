"""The demo learns: `recipes/tiny-demo.toml` (what `make train` runs), with its fixed seed, raises
the training reward and the held-out greedy accuracy over the run (measured: reward 0.38 -> 0.91, held-out 0.00 ->
1.00 in 10 iterations). A gradient that did nothing (or pushed the wrong way) leaves the
reward where it started: the sampled prompts change per iteration, but the policy would not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import load_config
from rlvr.views.sql import run_sql
from tests.helpers import ROOT

DEMO = ROOT / "recipes" / "tiny-demo.toml"


def test_lure_gives_up_on_arithmetic_only() -> None:
    from rlvr.models.tiny import lure_target

    row = {"task": "arithmetic", "meta": '{"a": 7, "op": "+", "b": 5}', "answer": "12"}
    assert lure_target(row) == "<answer></answer>"
    assert lure_target({"task": "logic", "meta": "{}", "answer": "true"}) is None


def test_lure_changes_the_tiny_model_only_when_set() -> None:
    from rlvr.config import Config
    from rlvr.models.tiny import _spec

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


def test_the_warm_up_never_pairs_a_run_problem_with_its_gold() -> None:
    """The tiny model's warm-up cannot hand a run its answers (a memorised train split gives every
    group the same reward and GRPO nothing to learn): arithmetic warms up on the other problems of
    its range, an own dataset on golds moved to other prompts."""
    from rlvr.config import Config
    from rlvr.models.tiny import warmup_rows
    from rlvr.problems.datasets import load_problems

    cfg = Config.model_validate({"task": {"ops": "+", "max_operand": 9, "n_train": 40, "n_test": 20}})
    rows = load_problems(cfg.task, cfg.prompt)
    warm = warmup_rows(cfg, rows)
    assert len(warm) == 20**2 - 60 and {r["question"] for r in warm}.isdisjoint(r["question"] for r in rows)
    assert sum(json.loads(r["meta"])["a"] <= 9 and json.loads(r["meta"])["b"] <= 9 for r in warm) == 40  # the run's leftovers
    sums = [json.loads(r["meta"]) for r in warm]
    assert all(r["answer"] == str(m["a"] + m["b"]) for r, m in zip(warm, sums, strict=True))  # right sums, of other problems
    assert all(r["split"] == "train" and r["prompt_id"].startswith("warmup-") for r in warm)

    own = [
        {
            "prompt_id": f"q-{k}",
            "question": f"q{k}",
            "prompt": f"q{k}",
            "answer": str(k),
            "split": "train",
            "task": "exact",
            "meta": None,
            "dataset": "q",
        }
        for k in range(5)
    ]
    moved = warmup_rows(Config.model_validate({"task": {"path": "x.jsonl"}}), own)
    assert [r["prompt_id"] for r in moved] == [r["prompt_id"] for r in own]
    assert all(m["answer"] != o["answer"] for m, o in zip(moved, own, strict=True))  # no prompt keeps its gold
    assert sorted(m["answer"] for m in moved) == sorted(o["answer"] for o in own)  # the format: the same kind of answers
