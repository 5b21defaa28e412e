"""Hand-written verify inputs for tests: a problems shard and a rollouts shard in the run store's
schemas, so the real verify pass (DuckDB + the Python tiers) can score chosen response texts."""

from __future__ import annotations

from pathlib import Path

from rlvr.schema import PROBLEMS, ROLLOUTS
from rlvr.store.commit import write_table


def write_inputs(folder: Path, problems: list[dict], responses: list[tuple]) -> tuple[list[Path], list[Path]]:
    """problems: dicts with prompt_id and answer, plus any other PROBLEMS column (task 't', split
    'train', prompt 'q' by default); responses: (prompt_id, text) or (prompt_id, text, response
    length in tokens), numbered 0, 1, ... per prompt. Returns ([rollouts file], [problems file])."""
    p = folder / "problems.parquet"
    defaults = {"task": "t", "split": "train", "prompt": "q", "tests": None, "sources": None, "meta": None}
    write_table([defaults | row for row in problems], PROBLEMS, p)
    rows, seen = [], {}
    for pid, text, *n_tok in responses:
        k = seen[pid] = seen.get(pid, -1) + 1
        rows.append(
            {
                "iteration": 0,
                "prompt_id": pid,
                "sample_idx": k,
                "prompt_token_ids": [1],
                "response_token_ids": [2],
                "response_logprobs": [-0.1],
                "response_text": text,
                "num_response_tokens": n_tok[0] if n_tok else 1,
                "finish_reason": "stop",
                "policy_version": 0,
                "engine": "transformers",
                "temperature": 1.0,
                "seed": 0,
            }
        )
    r = folder / "rollouts.parquet"
    write_table(rows, ROLLOUTS, r)
    return [r], [p]


def write_pairs(
    tmp_path: Path, problems: list[tuple[str, str]], responses: list[tuple[str, str]]
) -> tuple[list[Path], list[Path]]:
    """write_inputs for problems given as (prompt_id, answer) pairs."""
    return write_inputs(tmp_path, [{"prompt_id": pid, "answer": a} for pid, a in problems], responses)
