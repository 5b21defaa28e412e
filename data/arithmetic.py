"""Small-integer arithmetic: 'What is 7 + 12?' -> '19'. Deterministic in its seed.

Train and test splits never share a problem. Run `python -m rlvr.data.arithmetic` to print a few.
"""

from __future__ import annotations

import json
import random

TASK = "arithmetic"
INSTRUCTION = "Put the final answer inside <answer></answer>."
# the default user turn (config prompt.template overrides it); the data holds the question only
TEMPLATE = "{prompt} " + INSTRUCTION
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def render_prompt(a: int, op: str, b: int) -> str:
    """The question; the instruction is added by TEMPLATE when the prompt is rendered."""
    return f"What is {a} {op} {b}?"


def generate(*, seed: int, n_train: int, n_test: int, max_operand: int, ops: str) -> list[dict]:
    """Distinct problems, shuffled by `seed`; the first n_test are the held-out split."""
    triples = [(a, op, b) for op in dict.fromkeys(ops) for a in range(max_operand + 1) for b in range(max_operand + 1)]
    if n_train + n_test > len(triples):
        raise ValueError(f"asked for {n_train + n_test} problems, only {len(triples)} distinct ones exist")
    random.Random(seed).shuffle(triples)
    rows = []
    for idx, (a, op, b) in enumerate(triples[: n_test + n_train]):
        split = "test" if idx < n_test else "train"
        rows.append(
            {
                "prompt_id": f"{TASK}-{split}-{idx:05d}",
                "task": TASK,
                "split": split,
                "prompt": render_prompt(a, op, b),
                "answer": str(OPS[op](a, b)),
                "tests": None,
                "sources": None,
                "meta": json.dumps({"a": a, "op": op, "b": b}),
            }
        )
    return rows


if __name__ == "__main__":
    for row in generate(seed=0, n_train=5, n_test=2, max_operand=20, ops="+-"):
        print(row["split"], row["prompt"], "->", row["answer"])
