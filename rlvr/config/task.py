"""The [task] section: shipped tasks, your own datasets ([[task.datasets]]) and the split sizes.

Which rows a task or file becomes is rlvr.problems.datasets; this module only says what may be
configured. Test: pytest tests/unit/config/test_config.py tests/unit/data/test_datasets.py
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from rlvr.config.sections import _Section

TaskName = Literal["arithmetic", "humaneval", "stdio", "logic", "retrieval"]
TASK_NAMES: tuple[str, ...] = TaskName.__args__


# The verifier families a dataset can name (task.datasets.verifier). A family's name is also the
# problems' `task` value, which selects the tier in rlvr/verify:
#   math       SQL numeric / exact match, math-verify for symbolic answers
#   exact      normalised string equality only (no numeric or symbolic reading)
#   code       sandbox: the row's `tests` (an assert program, or stdin/stdout cases as JSON)
#   logic      verdicts (true/false/unknown, yes/no) exact; formulas checked for entailment
#   retrieval  answer match + <cite> spans found in the row's `sources`
VERIFIERS: tuple[str, ...] = ("math", "exact", "code", "logic", "retrieval")


class ColumnMap(_Section):
    prompt: str | None = Field(
        None, description="Column of the question; unset = the first of prompt, question, problem, input, query, instruction."
    )
    answer: str | None = Field(
        None, description="Column of the gold answer; unset = the first of answer, solution, target, output, label, gold."
    )
    id: str | None = Field(
        None,
        description="Column of a unique id (prompt_id = '<dataset name>-<id>'); unset = id, prompt_id, uid, task_id, else the row number.",
    )
    split: str | None = Field(
        None,
        description="Column of the split (train, or test/validation/val/dev/eval); unset = split, else a held-out split is drawn (test_fraction).",
    )
    tests: str | None = Field(None, description="Code: column of the test program or stdin/stdout cases; unset = tests, test.")
    sources: str | None = Field(
        None,
        description="Retrieval: column of the source passages (a list, or one string); unset = sources, passages, documents, context.",
    )


class DatasetSection(_Section):
    name: str = Field(
        "",
        description="Prefix of the dataset's prompt ids and its name in `problems.dataset`; \"\" = the file or folder name (the task's name for a shipped task).",
    )
    path: str = Field(
        "",
        description="A local file, folder or glob: .jsonl, .json (a list of objects), .csv, .parquet (a file or a folder of them), or a folder written by HF datasets' save_to_disk (needs `pip install 'rlvr[datasets]'`).",
    )
    shipped: TaskName | None = Field(
        None,
        description="Instead of path: a shipped task (arithmetic, humaneval, stdio, logic, retrieval) in a mixture; its [task] settings apply.",
    )
    format: Literal["auto", "jsonl", "json", "csv", "parquet", "hf"] = Field(
        "auto",
        description="File format; auto = from the extension (a folder: save_to_disk when it holds dataset_info.json or state.json, else Parquet).",
    )
    columns: ColumnMap = Field(
        default_factory=ColumnMap, description="Which column holds what; common names are found by default."
    )
    answer_extract: Literal["none", "gsm8k", "boxed", "regex"] = Field(
        "none",
        description="Gold answers that carry working: gsm8k = the text after the last '####'; boxed = the last \\boxed{...}; "
        "regex = answer_regex's first group (else its whole match); none = the column as is. The full text stays in meta.solution.",
    )
    answer_regex: str = Field("", description="answer_extract = 'regex': a Python regex; the last match is used.")
    verifier: str = Field(
        "math",
        description="How answers are checked: math (numbers, then symbolic via math-verify), exact (normalised strings), code (tests column, sandbox), logic, retrieval (sources column).",
    )
    template: str = Field(
        "",
        description="This dataset's user-turn template (Python format fields: {prompt}, {answer}, {id}, and any other column); \"\" = prompt.template, else the shipped task's default, else '{prompt}'.",
    )
    test_fraction: float = Field(
        0.1,
        ge=0.0,
        lt=1.0,
        description="With no split column: the share of rows held out (split = 'test'), chosen by a hash of (task.seed, id), so stable across runs and row order.",
    )
    weight: float | None = Field(
        None,
        gt=0.0,
        description="Sampling proportion in a mixture: each iteration's prompts are split between datasets in proportion to their weights (unset = 1 once any is set); unset everywhere = one pool, sampled uniformly.",
    )

    @field_validator("verifier")
    @classmethod
    def _known_verifier(cls, value: str) -> str:
        if value not in VERIFIERS:
            raise ValueError(f"unknown verifier {value!r}; use one of {', '.join(VERIFIERS)}")
        return value

    @model_validator(mode="after")
    def _check(self) -> DatasetSection:
        if bool(self.path) == (self.shipped is not None):
            raise ValueError("give a dataset either path = 'FILE, FOLDER or GLOB' or shipped = 'TASK', not both or neither")
        if self.answer_extract == "regex" and not self.answer_regex:
            raise ValueError("answer_extract = 'regex' needs answer_regex, e.g. answer_regex = 'Answer: (.+)'")
        if self.answer_regex:
            try:
                re.compile(self.answer_regex)
            except re.error as err:
                raise ValueError(f"answer_regex {self.answer_regex!r} is not a valid regex: {err}") from None
        return self

    @property
    def label(self) -> str:
        """The dataset's name: `name`, else the shipped task, else the file or folder stem."""
        if self.name:
            return self.name
        if self.shipped:
            return self.shipped
        stem = Path(self.path.rstrip("/")).name
        for suffix in (".jsonl", ".json", ".csv", ".parquet"):
            stem = stem.removesuffix(suffix)
        return re.sub(r"[^A-Za-z0-9_.]+", "_", stem) or "data"


class TaskSection(_Section):
    name: TaskName | list[TaskName] | None = Field(
        None,
        description="Shipped task (data/); unset = arithmetic, unless task.path or task.datasets names the data: arithmetic (generated), humaneval (164 code problems, assert tests), "
        "stdio (code, stdin/stdout tests), logic (true/false/unknown, syllogisms, propositional elimination), "
        "retrieval (answer + <cite> spans checked against the sources); or a list of them, a mixture: every "
        "task's problems in one pool, each scored by its own verifier and weights.",
    )
    seed: int = Field(1234, description="Seed of the problem generator and of the train/test split (independent of run.seed).")
    n_train: int | None = Field(
        None,
        ge=0,
        description="Training problems (of each task in a mixture); unset = the task's default (arithmetic 400, the others 80% of the set).",
    )
    n_test: int | None = Field(
        None,
        ge=0,
        description="Held-out problems (split = 'test'; of each task in a mixture), never sampled for training; unset = the task's default.",
    )
    max_operand: int = Field(20, ge=1, le=10_000, description="arithmetic: operands are drawn from 0..max_operand.")
    ops: str = Field("+-", min_length=1, description="arithmetic: operators to use, any of '+-*'.")
    path: str = Field(
        "",
        description="Shorthand for one dataset of your own (a [[task.datasets]] entry with this path and its defaults); replaces task.name.",
    )
    datasets: list[DatasetSection] = Field(
        default_factory=list,
        description="Your own datasets and shipped tasks, together one mixture ([[task.datasets]] tables); replaces task.name.",
    )

    @field_validator("name", mode="before")
    @classmethod
    def _known_tasks(cls, value: Any) -> Any:
        if value is None:
            return value
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names:
            raise ValueError(f"got {value!r}: give a task or a list of tasks, from {', '.join(TASK_NAMES)}")
        unknown = [n for n in names if n not in TASK_NAMES]
        if unknown:
            hint = "; for a file of your own, set task.path instead" if any(c in unknown[0] for c in "/.*") else ""
            raise ValueError(f"unknown task {unknown[0]!r}; the shipped tasks are {', '.join(TASK_NAMES)}{hint}")
        return value

    @property
    def names(self) -> list[str]:
        """The shipped tasks in use: task.name's (one, or a mixture's), or the shipped entries of task.datasets."""
        if self.path or self.datasets:
            return [d.shipped for d in self.datasets if d.shipped]
        if self.name is None:
            return ["arithmetic"]
        return [self.name] if isinstance(self.name, str) else list(self.name)

    def sources(self) -> list[DatasetSection]:
        """Every dataset of the pool, in order: task.datasets, or task.path's one, or task.name's shipped tasks."""
        if self.datasets:
            return list(self.datasets)
        if self.path:
            return [DatasetSection(path=self.path)]
        return [DatasetSection(shipped=n) for n in self.names]

    @model_validator(mode="after")
    def _check(self) -> TaskSection:
        bad = sorted(set(self.ops) - set("+-*"))
        if bad:
            raise ValueError(f"task.ops may only contain '+', '-', '*'; remove {''.join(bad)!r}")
        if not (self.path or self.datasets) and (not self.names or len(set(self.names)) != len(self.names)):
            raise ValueError(f"task.name = {self.name!r}: give one task or a list of distinct tasks")
        if (self.path or self.datasets) and self.name is not None:
            raise ValueError(
                "task.name and task.path / task.datasets are exclusive: list a shipped task as a "
                "[[task.datasets]] entry with shipped = 'NAME' to mix it with your own data"
            )
        if self.path and self.datasets:
            raise ValueError("task.path is the one-dataset shorthand: with [[task.datasets]], move it into an entry (path = ...)")
        labels = [d.label for d in self.sources()]
        if len(set(labels)) != len(labels):
            raise ValueError(
                f"task.datasets: two datasets are named {max(labels, key=labels.count)!r}; give each a distinct name"
            )
        if "arithmetic" in self.names:
            n_train, n_test = self.splits(0, "arithmetic")
            distinct = (self.max_operand + 1) ** 2 * len(set(self.ops))
            if n_train + n_test > distinct:
                raise ValueError(
                    f"task.n_train + task.n_test = {n_train + n_test} but only {distinct} distinct problems "
                    f"exist with max_operand={self.max_operand} and ops={self.ops!r}; lower the counts or raise task.max_operand"
                )
        return self

    def splits(self, size: int, name: str) -> tuple[int, int]:
        """(n_train, n_test) of task `name`: the configured counts (per task in a mixture), else the
        task's defaults for a set of `size` problems."""
        if name == "arithmetic":
            return (400 if self.n_train is None else self.n_train), (100 if self.n_test is None else self.n_test)
        n_test = self.n_test if self.n_test is not None else size // 5
        n_train = self.n_train if self.n_train is not None else max(size - n_test, 0)
        return n_train, n_test
