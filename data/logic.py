"""Logic problems with checkable answers: 300 rows of task "logic" in three kinds (meta "kind").

- "tfu" (120, 40 per answer): premises in plain English about named propositions; "Is it true,
  false, or unknown that ...?"; answer true/false/unknown.
- "propositional" (90): premises are formulas over P, Q, R, ...; the question names a variable to
  eliminate (meta "eliminate") and the answer is what the premises say about the others (any
  equivalent formula scores, rlvr.verify.logic.check_conclusion).
- "syllogism" (90, 45 yes / 45 no): does a categorical conclusion follow? answer true/false.

The rows are shipped as data/logic.jsonl, which rlvr.data.generators.logic builds (`python -m
rlvr.data.generators.logic`, needs reasoning-gym: the `data` extra) and documents (how each kind
is made and checked); every row's meta records its source, version, seed and index. This module
only reads the jsonl and splits it (rlvr.data.splits). `python -m rlvr.data.logic` prints a few.
Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q
"""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.data.splits import split_indices

TASK = "logic"
DATA_PATH = Path(__file__).parent / "logic.jsonl"
N_PROBLEMS = 300
THINK = "Think briefly, then put the final answer inside <answer></answer>"
INSTRUCTIONS = {
    "tfu": f"{THINK}: one word, true, false or unknown.",
    "propositional": f"{THINK}: a formula over the variables that remain, with the operators ∧ ∨ ¬ → ↔.",
    "syllogism": f"{THINK}: one word, yes or no.",
}
# default user turn: the rows hold the premises and question; each kind's instruction is meta.instruction
TEMPLATE = "{prompt}\n\n{instruction}"


def load_records(path: Path = DATA_PATH) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    if len(records) != N_PROBLEMS:
        raise ValueError(f"{path}: expected {N_PROBLEMS} problems, found {len(records)}; rebuild it")
    return records


def to_row(record: dict, *, split: str) -> dict:
    """A problems row; its prompt without the instruction, which moves to meta.instruction (TEMPLATE)."""
    instruction = INSTRUCTIONS[record["meta"]["kind"]]
    suffix = "\n\n" + instruction
    if not record["prompt"].endswith(suffix):
        raise ValueError(f"{record['prompt_id']}: prompt does not end with its instruction; rebuild {DATA_PATH.name}")
    meta = json.dumps(record["meta"] | {"instruction": instruction}, ensure_ascii=False, sort_keys=True)
    fields = {k: record[k] for k in ("prompt_id", "task", "answer")} | {"prompt": record["prompt"].removesuffix(suffix)}
    return fields | {"split": split, "tests": None, "sources": None, "meta": meta}


def generate(*, seed: int = 0, n_train: int = 240, n_test: int = 60) -> list[dict]:
    """Rows of rlvr.schema.PROBLEMS in prompt_id order: a seed-shuffled n_test are "test", the
    next n_train "train"; the rest are left out."""
    split = split_indices(N_PROBLEMS, seed=seed, n_train=n_train, n_test=n_test)
    records = load_records()
    return [to_row(records[i], split=s) for i, s in split.items()]


if __name__ == "__main__":
    for row in generate(n_train=0, n_test=N_PROBLEMS)[::100]:
        print(row["prompt_id"], json.loads(row["meta"])["kind"], "->", row["answer"])
        print(row["prompt"], "\n---")
