"""Retrieval: short reading-comprehension problems about invented towns, people, companies,
rivers and inventions, so that a model cannot answer from memory, only from the passages.

Each problem shows 2-4 numbered passages of 2-4 sentences; one holds the supporting sentence,
the others are distractors about other invented entities (at least one of the same kind, with
the same attribute, so the model must read which entity a sentence is about). A response should
quote the supporting sentence in <cite></cite> and give the short answer in <answer></answer>.
Rows of rlvr.schema.PROBLEMS: `sources` are the passages (without their "[k]" labels); `answer`
appears verbatim in the supporting sentence, and as a whole word nowhere else in the sources;
meta is {"support": the supporting sentence verbatim, "passage": its 0-based index in sources}.

The set is built once by rlvr.data.generators.retrieval and shipped as data/retrieval.jsonl;
this module reads it (`load`) and splits it (`generate`, rlvr.data.splits).
    python -m rlvr.data.generators.retrieval   # rewrite data/retrieval.jsonl (deterministic)
    python -m rlvr.data.retrieval              # print a few problems
Tests: .venv/bin/pytest -q tests/unit/data/test_retrieval_data.py
"""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.data.splits import split_indices

TASK = "retrieval"
PATH = Path(__file__).with_name("retrieval.jsonl")
N_PROBLEMS = 200
INSTRUCTION = (
    "Quote the sentence(s) that support your answer inside <cite></cite>, copied exactly "
    "from the passages, then give the short answer, as written there, inside "
    "<answer></answer>."
)

TEMPLATE = "{prompt}\n" + INSTRUCTION  # default user turn; generate()'s rows hold passages + question


def question_only(prompt: str) -> str:
    """A shipped prompt without its instruction (which TEMPLATE adds back when rendering)."""
    suffix = "\n" + INSTRUCTION
    if not prompt.endswith(suffix):
        raise ValueError(f"shipped retrieval prompt does not end with the instruction: {prompt[-80:]!r}")
    return prompt.removesuffix(suffix)


def load(path: Path = PATH) -> list[dict]:
    """The shipped rows (prompt_id, task, prompt, answer, sources, meta), in prompt_id order."""
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m rlvr.data.generators.retrieval`")
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def generate(*, seed: int = 0, n_train: int = 160, n_test: int = 40) -> list[dict]:
    """Rows in prompt_id order; a seed-shuffled n_test are "test", the next n_train "train"."""
    problems = load()
    split = split_indices(len(problems), seed=seed, n_train=n_train, n_test=n_test)
    return [{**problems[i], "prompt": question_only(problems[i]["prompt"]), "split": s, "tests": None} for i, s in split.items()]


if __name__ == "__main__":
    for row in generate()[:3]:
        print(row["prompt_id"], row["split"], "->", row["answer"], "|", json.loads(row["meta"]))
        print(row["prompt"], "\n---")
