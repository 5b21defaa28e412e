"""The [verify] section: reward composition per task, answer extraction, advantages, the code and
math-verify tiers' limits, and reward plug-ins ([[verify.rewards]]).

What the settings do is rlvr.verify's; this module only says what may be configured.
Test: pytest tests/unit/config/test_config.py
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from rlvr.config.sections import _Section


class RewardWeights(_Section):
    correct: float = Field(1.0, description="Weight of the correctness score (1/0; code: 1/0 or the fraction of tests passed).")
    format: float = Field(0.0, description="Weight of format_ok (see verify.format).")
    citation: float = Field(
        0.0,
        description="Weight of the fraction of <cite> spans supported by the sources (retrieval: verify_citations.sql); "
        "paid only beside a correct answer.",
    )


DEFAULT_WEIGHTS = {"default": RewardWeights(), "retrieval": RewardWeights(citation=0.5)}
# verify.extraction (README "The answer contract"): strict for every task: the answer is what the response
# marks (<answer>, \boxed{}, '####', a final-answer line). A recipe whose model writes bare numbers sets
# lenient for its task explicitly (recipes/smollm2-arithmetic.toml).
DEFAULT_EXTRACTION = {"default": "strict"}

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
        description="A response whose markers (tags, boxes, '####', a final-answer line) hold different answers: "
        "'reject' = wrong (a hedge), 'last' = the last marker counts.",
    )
    extraction: dict[str, Literal["strict", "lenient"]] = Field(
        default_factory=lambda: dict(DEFAULT_EXTRACTION),
        description="Where the answer is read, per task (the problems' `task` column; tasks not listed use 'default'): "
        "'strict' = only what the response marks: <answer>...</answer>, \\boxed{}, '#### X', or a last line opening "
        "'The final answer is', 'Final Answer:' or 'Answer:'; 'lenient' = else the last number of the last line, "
        "when no other number shares that line and only punctuation or a unit follows it. One word sets every task: "
        'verify.extraction = "strict". Default: strict.',
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
            "strict_default": modes.get("default", "strict") == "strict",
        }

    @field_validator("weights", mode="before")
    @classmethod
    def _merge_weights(cls, value: Any) -> Any:
        return {**DEFAULT_WEIGHTS, **value} if isinstance(value, dict) else value

    def weights_for(self, task: str) -> RewardWeights:
        """verify.weights[task], else verify.weights['default'], else correctness only."""
        return self.weights.get(task) or self.weights.get("default") or RewardWeights()
