"""Stage functions called directly (no Prefect): prompt sampling, refill sizes, eval stats
and rollout rows (DAPO dynamic sampling on the tiny model: tests/integration/test_dynamic_sampling.py)."""

from __future__ import annotations

from rlvr import stages


def test_iteration_prompts_are_deterministic_and_exclusive() -> None:
    ids = [f"p{k}" for k in range(50)]
    a = stages.iteration_prompts(ids, 10, seed=1, iteration=2)
    assert a == stages.iteration_prompts(list(reversed(ids)), 10, seed=1, iteration=2) and len(set(a)) == 10
    assert a != stages.iteration_prompts(ids, 10, seed=1, iteration=3)
    top_up = stages.iteration_prompts(ids, 45, seed=1, iteration=2, round=1, exclude=frozenset(a))
    assert len(top_up) == 40 and not set(top_up) & set(a)  # bounded by what is left


def test_refill_size_asks_for_the_missing_groups_until_the_target_or_the_last_round() -> None:
    from rlvr.stages.generation import refill_size

    assert refill_size([3], target=8, rounds=2) == 5  # after round 0: 5 groups missing
    assert refill_size([3, 2], target=8, rounds=2) == 3  # after round 1 of 2
    assert refill_size([3, 2, 1], target=8, rounds=2) == 0  # the last extra round is done: stop short
    assert refill_size([8], target=8, rounds=2) == 0  # target met at once
    assert refill_size([5, 4], target=8, rounds=3) == 0  # met, overshooting
    assert refill_size([0], target=4, rounds=0) == 0  # dynamic sampling off


def test_eval_stats_count_every_response_and_each_problem_once() -> None:
    import pyarrow as pa

    from rlvr.stages.evaluation import eval_stats

    rows = pa.table(
        {"prompt_id": ["a", "a", "b", "b", "c", "c"], "correct": [1, 0, 0, 0, 1, 1], "reward": [1.0, 0.0, 0.0, 0.0, 1.0, 0.5]}
    )
    assert eval_stats(rows, problems=3, samples=2, temperature=0.7) == {
        "problems": 3,
        "samples": 2,
        "temperature": 0.7,
        "accuracy": 3 / 6,
        "pass_at_2": 2 / 3,  # a and c solved at least once
        "reward_mean": 2.5 / 6,
    }


def test_a_rollout_row_fills_every_rollouts_column() -> None:
    """rollout, evaluate and `rlvr import` build their rows with schema.rollout_row: a column added to
    ROLLOUTS must be filled there; v_i writes iteration i, and the token count is the tokens'."""
    from rlvr.schema import ROLLOUTS, rollout_row

    row = rollout_row(
        iteration=3,
        prompt_id="p",
        sample_idx=1,
        prompt_token_ids=[5, 6],
        response_token_ids=[7, 8, 9],
        response_logprobs=None,
        response_text="x",
        finish_reason="stop",
        engine="import",
        temperature=1.0,
        seed=0,
    )
    assert list(row) == ROLLOUTS.names
    assert (row["policy_version"], row["num_response_tokens"], row["model"]) == (3, 3, None)
