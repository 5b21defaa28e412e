"""Every shipped task through the real stages (prepare -> rollout -> verify -> update) with its own
embedded tiny model (a short warm-up: the mechanics are under test, not the learning), and the
refusal of prompts that do not fit a model's context."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.verify.code import sandbox_problem
from rlvr.views.sql import run_sql

pytestmark = pytest.mark.slow

# task.name -> (problems' task column, verifiers its rows may be decided by)
TASKS = {
    "logic": ("logic", {"sql_exact", "logic"}),
    "retrieval": ("retrieval", {"sql_exact", "sql_numeric", "math_verify"}),  # a number gold met by a symbolic response
    "stdio": ("code", {"sandbox"}),
    "humaneval": ("code", {"sandbox"}),
}


def _config(task: str, **extra) -> Config:
    return Config.model_validate(
        {
            "run": {"iterations": 1},
            "model": {"tiny_warmup_steps": 20},
            "task": {"name": task} | extra,
            "rollout": {"prompts_per_iteration": 4, "group_size": 2, "max_new_tokens": 24, "engine": "transformers"},
            "update": {"minibatches": 1},
        }
    )


@pytest.mark.parametrize("task", list(TASKS))
def test_task_runs_one_iteration(tmp_path: Path, task: str) -> None:
    column, verifiers = TASKS[task]
    if column == "code" and sandbox_problem() is not None:
        pytest.skip(f"no code sandbox here: {sandbox_problem()}")
    d = tmp_path / "run"
    cfg = _config(task)
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    stages.update(d, 0)
    n_train, n_test = cfg.task.splits(len(run_sql(d, "SELECT * FROM problems")), task)
    split = run_sql(d, "SELECT split, count(*) AS n, min(task) AS t, max(task) AS t2 FROM problems GROUP BY 1 ORDER BY 1")
    assert split.to_pylist() == [
        {"split": "test", "n": n_test, "t": column, "t2": column},
        {"split": "train", "n": n_train, "t": column, "t2": column},
    ]
    rows = run_sql(d, "SELECT s.*, p.split FROM scores s JOIN problems p USING (prompt_id)").to_pylist()
    assert len(rows) == 4 * 2 and {r["split"] for r in rows} == {"train"}
    assert {r["verifier"] for r in rows} <= verifiers, {r["verifier"] for r in rows}
    for r in rows:  # the reward is the sum of its component columns, each reason readable
        parts = r["reward_correct"] + r["reward_format"] + r["reward_citation"] + r["length_penalty"]
        assert r["reward"] == pytest.approx(parts) and r["reason"]
        assert (r["citations"] is not None) == (column == "retrieval")
    # the update trained on exactly the groups whose rewards differ, and dropped the rest
    signal = run_sql(
        d,
        "SELECT count(*) FILTER (WHERE n > 1) AS used, count(*) FILTER (WHERE n = 1) AS dropped "
        "FROM (SELECT prompt_id, count(DISTINCT reward) AS n FROM scores GROUP BY 1)",
    ).to_pylist()[0]
    step = run_sql(d, "SELECT groups_used AS used, groups_dropped AS dropped, tokens FROM updates ORDER BY step LIMIT 1")
    first = step.to_pylist()[0]
    assert {"used": first["used"], "dropped": first["dropped"]} == signal
    assert (first["tokens"] > 0) == (signal["used"] > 0)


def test_a_mixture_of_tasks_trains_in_one_pool(tmp_path: Path) -> None:
    """task.name = [logic, retrieval]: both sets in problems/, each response scored by its own
    verifier and weights (retrieval's citation column filled, logic's left null)."""
    d = tmp_path / "run"
    cfg = Config.model_validate(
        _config("logic").model_dump(mode="json", exclude_none=True)
        | {"task": {"name": ["logic", "retrieval"], "n_train": 6, "n_test": 2}}
    )
    cfg.rollout.prompts_per_iteration = 12
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    stages.update(d, 0)
    problems = run_sql(d, "SELECT task, split, count(*) AS n FROM problems GROUP BY ALL ORDER BY ALL").to_pylist()
    assert problems == [{"task": t, "split": s, "n": n} for t in ("logic", "retrieval") for s, n in (("test", 2), ("train", 6))]
    rows = run_sql(d, "SELECT task, citations FROM scores").to_pylist()
    assert len(rows) == 12 * 2 and {r["task"] for r in rows} == {"logic", "retrieval"}  # 12 of the 12 train prompts
    assert all((r["citations"] is None) == (r["task"] == "logic") for r in rows)


def test_prompt_longer_than_the_context_is_refused(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    """HumanEval's prompts do not fit the arithmetic tiny model's 256 positions: rollout says so,
    naming the prompt and the settings to change, and commits nothing."""
    if sandbox_problem() is not None:
        pytest.skip("HumanEval rows are code rows; keep the sandbox-free machines out of this")
    d = tmp_path / "run"
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["task"] = {"name": "humaneval"}
    create_or_open(d, Config.model_validate(data), 1)
    stages.prepare(d)
    with pytest.raises(
        ValueError,
        match=r"prompt 'humaneval-\d+' has \d+ tokens; with rollout.max_new_tokens = 16 "
        r"that exceeds the model.s context of 256 tokens: use a model with a longer context",
    ):
        stages.rollout(d, 0)
    assert not (d / "rollouts").exists() or not any((d / "rollouts").rglob("*.parquet"))


def test_too_many_problems_names_the_fields(tmp_path: Path) -> None:
    from rlvr import data

    with pytest.raises(data.TaskDataError, match=r"task.n_train \+ task.n_test = 290 \+ 20 = 310, but task 'logic' has 300"):
        data.one(_config("logic", n_train=290, n_test=20).task, "logic")
    assert len(data.one(_config("retrieval").task, "retrieval")) == data.size("retrieval")
