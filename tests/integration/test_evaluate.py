"""evaluate(i): policy v_i on the held-out split, scored by the training verifiers, into `evals`;
scheduled by eval.every in the flow and shown by `rlvr status`."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import EVALUATE
from rlvr.store.records import read_record
from rlvr.views.sql import run_sql
from rlvr.views.status import status_rows

pytestmark = pytest.mark.slow


def _config(small_config: Config, tiny_model: Path, **eval_section) -> Config:
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["run"]["iterations"] = 1
    data["eval"] = {"every": 1, "prompts": 12} | eval_section
    return Config.model_validate(data)


def test_eval_points() -> None:
    cfg = Config.model_validate({"run": {"iterations": 5}, "eval": {"every": 2}})
    assert cfg.eval_points() == [0, 2, 4, 5]
    assert Config.model_validate({"run": {"iterations": 4}, "eval": {"every": 2}}).eval_points() == [0, 2, 4]
    assert Config().eval_points() == []


def test_evaluate_scores_held_out_problems_greedily(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    cfg = _config(small_config, tiny_model)
    runs = []
    for name in ("a", "b"):
        d = tmp_path / name
        create_or_open(d, cfg, 1)
        stages.prepare(d)
        first = stages.evaluate(d, 0)
        assert not first.skipped and first.rows == 12
        assert stages.evaluate(d, 0).skipped  # committed: a rerun is a no-op
        runs.append(d)
    d = runs[0]
    rows = run_sql(d, "SELECT e.*, p.split FROM evals e JOIN problems p USING (prompt_id) ORDER BY prompt_id").to_pylist()
    assert len(rows) == 12 and {r["split"] for r in rows} == {"test"} and {r["policy_version"] for r in rows} == {0}
    assert all(r["temperature"] == 0.0 and r["reason"] for r in rows)
    rec = read_record(create_or_open(d, None, None).paths.record(EVALUATE, 0))
    assert rec.extra["accuracy"] == pytest.approx(sum(r["correct"] for r in rows) / 12)
    # greedy: the same policy gives the same answers in another run folder
    other = run_sql(runs[1], "SELECT prompt_id, response_text FROM evals ORDER BY prompt_id").to_pylist()
    assert other == [{"prompt_id": r["prompt_id"], "response_text": r["response_text"]} for r in rows]

    stages.rollout(d, 0)
    stages.verify(d, 0)
    stages.update(d, 0)
    stages.evaluate(d, 1)
    per = run_sql(
        d,
        "SELECT iteration, min(policy_version) AS v, count(*) AS n, count(DISTINCT prompt_id) AS p "
        "FROM evals GROUP BY 1 ORDER BY 1",
    ).to_pylist()
    assert per == [{"iteration": 0, "v": 0, "n": 12, "p": 12}, {"iteration": 1, "v": 1, "n": 12, "p": 12}]
    notes = [r for r in status_rows(d) if r["stage"] == EVALUATE]
    assert [r["iteration"] for r in notes] == [0, 1] and notes[0]["note"].startswith("v0 on 12 held-out: accuracy")


def test_pass_at_k(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    cfg = _config(small_config, tiny_model, samples=4, temperature=1.0, prompts=6)
    d = tmp_path / "run"
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.evaluate(d, 0)
    rows = run_sql(d, "SELECT prompt_id, bool_or(correct) AS any_ok, count(*) AS n FROM evals GROUP BY 1").to_pylist()
    assert len(rows) == 6 and {r["n"] for r in rows} == {4}
    rec = read_record(create_or_open(d, None, None).paths.record(EVALUATE, 0))
    assert rec.extra["pass_at_4"] == pytest.approx(sum(r["any_ok"] for r in rows) / 6)
    assert rec.extra["pass_at_4"] >= rec.extra["accuracy"]


def test_no_held_out_problems_is_explained(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    from rlvr.errors import RlvrError

    data = _config(small_config, tiny_model).model_dump(mode="json", exclude_none=True)
    data["task"]["n_test"] = 0
    d = tmp_path / "run"
    with pytest.raises(RlvrError, match=r"eval.every = 1 but the task has no held-out problems"):  # a start: before any file
        create_or_open(d, Config.model_validate(data), 1)
    assert not d.exists()
    data["eval"]["every"] = 0  # a run without evaluation, asked to evaluate anyway: a user error too
    create_or_open(d, Config.model_validate(data), 1)
    stages.prepare(d)
    with pytest.raises(RlvrError, match=r"task.n_test = 0.*eval.every = 0"):
        stages.evaluate(d, 0)
    assert read_record(create_or_open(d, None, None).paths.record(EVALUATE, 0)) is None


def test_flow_evaluates_before_and_after_training(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    from rlvr.flows.train import train

    """Also under the most aggressive retention (keep_last = 1): each evaluate(i) runs before
    update(i) commits v_{i+1}, so v_i is still there when it is evaluated."""
    d = tmp_path / "run"
    cfg = _config(small_config, tiny_model)
    create_or_open(d, cfg.model_copy(update={"checkpoint": cfg.checkpoint.model_copy(update={"keep_last": 1})}), 2)
    results = train(str(d))
    assert [(r["stage"], r["iteration"]) for r in results] == [
        ("prepare", None),
        ("evaluate", 0),
        ("rollout", 0),
        ("verify", 0),
        ("update", 0),
        ("evaluate", 1),
        ("rollout", 1),
        ("verify", 1),
        ("update", 1),
        ("evaluate", 2),
    ]
    acc = run_sql(d, "SELECT iteration, avg(correct::INT) AS acc FROM evals GROUP BY 1 ORDER BY 1").to_pylist()
    assert [a["iteration"] for a in acc] == [0, 1, 2]
    assert sorted(p.name for p in (d / "policy").iterdir()) == ["v000000", "v000002"]
