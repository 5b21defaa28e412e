"""DAPO dynamic sampling on the tiny model, the stage functions called directly (no Prefect):
groups without signal are topped up, and a run without any signal runs every round and counts
them. Prompt sampling and rollout rows: tests/unit/stages/test_stages.py."""

from __future__ import annotations

from pathlib import Path

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import ROLLOUT
from rlvr.store.records import read_record
from rlvr.views.sql import run_sql


def test_dynamic_sampling_tops_up_groups_without_signal(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    data = small_config.model_dump()
    data["rollout"].update(dynamic_sampling_rounds=3, prompts_per_iteration=8)
    cfg = Config.model_validate(data)
    d = tmp_path / "run"
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    rounds = read_record(create_or_open(d, None, None).paths.record(ROLLOUT, 0)).extra["rounds"]
    assert rounds[0]["prompts"] == 8 and 1 <= len(rounds) <= 4, rounds
    # another round exactly when the groups with signal so far fall short (whatever the model sampled)
    for k in range(len(rounds) - 1):
        assert sum(x["signal_groups"] for x in rounds[: k + 1]) < 8, rounds
    assert len(rounds) == 4 or sum(x["signal_groups"] for x in rounds) >= 8, rounds
    have = 0
    for r in rounds[:-1]:  # every extra round asked exactly for the missing groups
        have += r["signal_groups"]
        assert have < 8
    if len(rounds) > 1:
        assert [r["prompts"] for r in rounds[1:]] == [
            8 - sum(x["signal_groups"] for x in rounds[: k + 1]) for k in range(len(rounds) - 1)
        ]
    stages.verify(d, 0)
    per_prompt = run_sql(d, "SELECT prompt_id, count(*) AS n FROM rollouts GROUP BY 1").to_pylist()
    assert len(per_prompt) == sum(r["prompts"] for r in rounds)  # no prompt sampled twice
    assert {p["n"] for p in per_prompt} == {cfg.rollout.group_size}
    signal = run_sql(d, "SELECT count(DISTINCT prompt_id) AS n FROM scores WHERE group_std > 0").to_pylist()[0]["n"]
    assert signal == sum(r["signal_groups"] for r in rounds)  # the filter agreed with the verify stage


def test_dynamic_sampling_without_any_signal_runs_every_round_and_counts_them(
    tmp_path: Path, small_config: Config, tiny_model: Path, caplog
) -> None:
    """Greedy sampling makes a group's G responses identical, so no group ever carries signal: the
    test makes that precondition itself. Every round then runs, each on fresh prompts; the progress
    counts all of their responses; and no log line announces a round that does not happen."""
    import logging

    from rlvr.progress import PROGRESS

    data = small_config.model_dump()
    data["rollout"].update(dynamic_sampling_rounds=2, prompts_per_iteration=4, temperature=0.0)
    cfg = Config.model_validate(data)
    d = tmp_path / "run"
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.rlvr_progress)
    PROGRESS.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO, logger="rlvr"):
            stages.rollout(d, 0)
    finally:
        PROGRESS.removeHandler(handler)
    rounds = read_record(create_or_open(d, None, None).paths.record(ROLLOUT, 0)).extra["rounds"]
    G = cfg.rollout.group_size
    assert [(r["prompts"], r["signal_groups"]) for r in rounds] == [(4, 0)] * 3
    n = run_sql(d, "SELECT count(*) AS n, count(DISTINCT prompt_id) AS p FROM rollouts").to_pylist()[0]
    assert n == {"n": 3 * 4 * G, "p": 12}
    assert (seen[-1].done, seen[-1].total) == (3 * 4 * G, 3 * 4 * G)  # the bar ends at every response made
    assert all(b.done >= a.done for a, b in zip(seen, seen[1:], strict=False))  # it never goes back
    more = [r.getMessage() for r in caplog.records if "more prompts" in r.getMessage()]
    assert len(more) == 2 and all("sampling 4 more prompts" in m for m in more)  # rounds 1 and 2, not after 2
    assert any("after the last round" in r.getMessage() for r in caplog.records)
