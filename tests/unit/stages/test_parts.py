"""rollout.shards: the part names, which prompts a part takes, the config's refusals, and the stage record
that a stage's parts make (rlvr.stages.parts)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rlvr.config import RolloutSection
from rlvr.schema import part_folder, part_stage, split_part
from rlvr.stages.parts import merged_extra, part_prompts
from rlvr.stages.scoring import merged_scores
from rlvr.store.records import CommitRecord


@pytest.mark.parametrize(
    ("part", "parts", "name", "folder"),
    [
        (0, 2, "rollout.part-1-of-2", "part-1-of-2"),
        (1, 2, "rollout.part-2-of-2", "part-2-of-2"),
        (9, 12, "rollout.part-10-of-12", "part-10-of-12"),
        (0, 12, "rollout.part-01-of-12", "part-01-of-12"),
    ],
)
def test_part_names(part: int, parts: int, name: str, folder: str) -> None:
    assert part_stage("rollout", part, parts) == name and part_folder(part, parts) == folder
    assert split_part(name) == ("rollout", part, parts)


@pytest.mark.parametrize("stage", ["rollout", "verify", "rescore.mine"])
def test_a_whole_stage_is_no_part(stage: str) -> None:
    assert split_part(stage) == (stage, None, None)


def test_a_part_outside_its_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="part 2 of 2"):
        part_stage("rollout", 2, 2)


def test_parts_split_the_prompts_by_id_balanced_and_whole() -> None:
    chosen = [f"p{k:02d}" for k in (7, 3, 11, 0, 5, 9, 2, 8)]
    got = [part_prompts(chosen, p, 3) for p in range(3)]
    assert got == [["p00", "p05", "p09"], ["p02", "p07", "p11"], ["p03", "p08"]]
    assert sorted(x for g in got for x in g) == sorted(chosen)
    assert part_prompts(list(reversed(chosen)), 1, 3) == got[1]  # the ids decide, not the order they come in


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"shards": 2, "dynamic_sampling_rounds": 1}, "rollout.shards = 2 with rollout.dynamic_sampling_rounds = 1"),
        ({"shards": 5, "prompts_per_iteration": 4}, "rollout.shards = 5 is more than rollout.prompts_per_iteration = 4"),
        ({"shards": 0}, "greater than or equal to 1"),
    ],
)
def test_the_config_refuses_parts_that_cannot_work(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RolloutSection(**fields)


def _record(stage: str, rows: int, extra: dict, worker: dict | None) -> CommitRecord:
    return CommitRecord(
        stage=stage,
        iteration=1,
        fingerprint="f",
        inputs={},
        outputs=[],
        rows=rows,
        seconds=2.5,
        created_at="2026-12-06T00:00:00+00:00",
        extra=extra,
        worker=worker,
    )


def test_the_stage_record_sums_its_parts_and_names_each() -> None:
    base = {"engine": "transformers", "policy_version": 1, "staleness": 0, "rounds": [{"round": 0}]}
    recs = [
        _record(
            "rollout.part-1-of-2",
            12,
            base | {"tokens": 100, "generation_seconds": 2.0, "engine_start_seconds": 1.0},
            {"name": "a"},
        ),
        _record(
            "rollout.part-2-of-2", 8, base | {"tokens": 60, "generation_seconds": 4.0, "engine_start_seconds": 0.5}, {"name": "b"}
        ),
    ]
    x = merged_extra(recs)
    assert (x["engine"], x["policy_version"], x["tokens"]) == ("transformers", 1, 160)
    assert (x["generation_seconds"], x["engine_start_seconds"], x["tokens_per_s"]) == (4.0, 1.0, 40.0)  # the slowest part's
    assert "rounds" not in x
    assert x["parts"] == [
        {"stage": "rollout.part-1-of-2", "rows": 12, "seconds": 2.5, "tokens": 100, "worker": {"name": "a"}},
        {"stage": "rollout.part-2-of-2", "rows": 8, "seconds": 2.5, "tokens": 60, "worker": {"name": "b"}},
    ]


def test_verify_commits_its_parts_counts_summed_and_the_mean_over_all_rows() -> None:
    recs = [
        _record("verify.part-1-of-2", 6, {"correct": 3, "reward_mean": 0.5, "code": 6, "timeouts": 1}, {"name": "a"}),
        _record("verify.part-2-of-2", 2, {"correct": 2, "reward_mean": 1.0, "code": 2, "timeouts": 0}, {"name": "b"}),
    ]
    x = merged_scores(recs)
    assert {k: x[k] for k in ("correct", "code", "timeouts")} == {"correct": 5, "code": 8, "timeouts": 1}
    assert x["reward_mean"] == pytest.approx((6 * 0.5 + 2 * 1.0) / 8)  # over rows, not over parts
    assert [(p["stage"], p["rows"], p["worker"]) for p in x["parts"]] == [
        ("verify.part-1-of-2", 6, {"name": "a"}),
        ("verify.part-2-of-2", 2, {"name": "b"}),
    ]
