"""The run store's one schema module: every path, table, column and stage name lives here.

A run is a folder (see DESIGN.md):

    runs/<run>/run.toml                                   frozen config + hash
    runs/<run>/problems/part-000000.parquet
    runs/<run>/{rollouts,scores,updates,evals}/iteration=000003/part-*.parquet
    runs/<run>/policy/v000003/                            HF folder (+ trainer_state.pt: optimiser, scheduler, RNG, cursor)
    runs/<run>/_stages/iteration=000003/<stage>.json      commit records
    runs/<run>/_stages/prepare.json
    runs/<run>/_stages/pruned/v000003.json                files [checkpoint] retention deleted

and an `rlvr eval --out OUT` folder: OUT/{problems,responses,summary,pass_at_k}.parquet + OUT/eval.json.

Python code and SQL both take names from here; `rlvr sql` builds its views from TABLES.
Shards carry their own `iteration` column, so a single file is self-describing; SQL reads them
with hive_partitioning = false because DuckDB would otherwise shadow the int column with the
folder's VARCHAR '000003'.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, get_args, get_type_hints

import pyarrow as pa

# ---- tables -------------------------------------------------------------------------------

PROBLEMS = pa.schema(
    [
        pa.field("prompt_id", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),  # "train" | "test" | "few_shot" (prompt.few_shot = N examples)
        pa.field("prompt", pa.string(), nullable=False),  # user message (template applied), before any chat template
        # the dataset's own problem text, before the template (`rlvr import` matches either); NULL in runs
        # prepared before the column existed
        pa.field("question", pa.string()),
        pa.field("answer", pa.string(), nullable=False),  # ground truth, as text
        pa.field("tests", pa.string()),  # code tasks: test program; null otherwise
        pa.field("sources", pa.list_(pa.string())),  # retrieval tasks: source passages
        pa.field("meta", pa.string()),  # JSON object, task-specific; own datasets: their other columns
        pa.field("dataset", pa.string()),  # the dataset (task.datasets name, or the shipped task) the row came from
    ]
)

ROLLOUTS = pa.schema(
    [
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("prompt_id", pa.string(), nullable=False),
        pa.field("sample_idx", pa.int32(), nullable=False),  # 0..G-1 inside the group
        pa.field("prompt_token_ids", pa.list_(pa.int32()), nullable=False),
        pa.field("response_token_ids", pa.list_(pa.int32()), nullable=False),
        # log p(token) of each sampled token under the sampling policy, logits / temperature; NULL for an
        # imported response given without them (`rlvr import`: the trainer computes them under v_i)
        pa.field("response_logprobs", pa.list_(pa.float32())),
        pa.field("response_text", pa.string(), nullable=False),
        pa.field("num_response_tokens", pa.int32(), nullable=False),
        pa.field("finish_reason", pa.string(), nullable=False),  # "stop" | "length"
        pa.field("policy_version", pa.int32(), nullable=False),  # the policy sampled from: v_max(0, i - rollout.max_staleness)
        # iteration - policy_version: how many updates behind the trained policy the sampler was (0 = on-policy);
        # NULL in runs written before the column existed (they were all on-policy)
        pa.field("staleness", pa.int32()),
        pa.field("engine", pa.string(), nullable=False),  # "transformers" | "vllm"
        pa.field("temperature", pa.float32(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),  # derived from (seed, iteration, prompt, sample)
        # who wrote the response: null = the run's policy; `rlvr import`: the file's model column (engine = 'import')
        pa.field("model", pa.string()),
    ]
)


def rollout_row(
    *,
    iteration: int,
    prompt_id: str,
    sample_idx: int,
    prompt_token_ids: list[int],
    response_token_ids: list[int],
    response_logprobs: list[float] | None,
    response_text: str,
    finish_reason: str,
    engine: str,
    temperature: float,
    seed: int,
    model: str | None = None,
    policy_version: int | None = None,
) -> dict:
    """One ROLLOUTS row, the one place its columns are filled (the rollout and evaluate stages, `rlvr
    import`): iteration i's responses come from `policy_version` (default v_i; rollout.max_staleness
    = k samples v_max(0, i-k)), staleness is i minus it, and num_response_tokens counts the tokens."""
    version = iteration if policy_version is None else policy_version
    return {
        "iteration": iteration,
        "prompt_id": prompt_id,
        "sample_idx": sample_idx,
        "prompt_token_ids": prompt_token_ids,
        "response_token_ids": response_token_ids,
        "response_logprobs": response_logprobs,
        "response_text": response_text,
        "num_response_tokens": len(response_token_ids),
        "finish_reason": finish_reason,
        "policy_version": version,
        "staleness": iteration - version,
        "engine": engine,
        "temperature": temperature,
        "seed": seed,
        "model": model,
    }


# One reward plug-in's part of a row's reward (config [[verify.rewards]], rlvr.verify.plugins). Plug-in
# names are the user's, so they are values, not columns: `scores.components` is a list of these, and
# `rlvr sql` shows them one row each in the view `reward_components`.
COMPONENT = pa.struct(
    [
        pa.field("name", pa.string()),  # the plug-in's name; its column-style label is reward_<name>
        pa.field("weight", pa.float64()),
        pa.field("score", pa.float64()),  # what the plug-in returned; null = it could not score the row
        pa.field("reward", pa.float64()),  # weight * score (0 when score is null)
        pa.field("reason", pa.string()),
    ]
)
DEFAULT_SCORING = "default"  # the scoring the run's own verify stage writes; `rlvr rescore --name` adds others

SCORES = pa.schema(
    [
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("prompt_id", pa.string(), nullable=False),
        pa.field("sample_idx", pa.int32(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("extracted_answer", pa.string()),  # null when nothing could be extracted
        pa.field("extraction", pa.string(), nullable=False),  # answer_tag | boxed | gsm8k | final_line | last_number | none
        pa.field("format_ok", pa.bool_(), nullable=False),  # verify.format: an <answer> tag, or <think> then <answer>
        pa.field("correct", pa.bool_(), nullable=False),
        # reward = reward_correct + reward_format + reward_citation + length_penalty; the components are
        # weighted (config verify.weights, per task)
        pa.field("reward", pa.float64(), nullable=False),
        pa.field("reward_correct", pa.float64(), nullable=False),  # w.correct * (1/0, or code's fraction passed)
        pa.field("reward_format", pa.float64(), nullable=False),  # w.format * format_ok
        pa.field("reward_citation", pa.float64(), nullable=False),  # w.citation * citations_supported / citations
        pa.field("length_penalty", pa.float64(), nullable=False),  # DAPO soft overlong shaping, <= 0
        pa.field("citations", pa.int32()),  # retrieval: <cite> spans in the response; null for other tasks
        pa.field("citations_supported", pa.int32()),  # retrieval: spans found in the problem's sources
        pa.field(
            "verifier", pa.string(), nullable=False
        ),  # which tier decided: sql_numeric, sql_exact, math_verify, sandbox, logic
        pa.field("verifier_error", pa.bool_(), nullable=False),  # the verifier failed: left out of the baseline
        pa.field("reason", pa.string(), nullable=False),  # why it scored what it scored
        pa.field("group_size", pa.int32(), nullable=False),  # rows in the baseline (verifier errors excluded)
        pa.field("group_mean", pa.float64(), nullable=False),
        pa.field("group_std", pa.float64(), nullable=False),
        pa.field("advantage", pa.float64(), nullable=False),
        # reward plug-ins: reward = the built-in terms above + sum(components.reward); empty without plug-ins
        pa.field("components", pa.list_(COMPONENT), nullable=False),
        pa.field("scoring", pa.string(), nullable=False),  # DEFAULT_SCORING, or the name given to `rlvr rescore`
    ]
)

I32 = Annotated[int, pa.int32()]
I64 = Annotated[int, pa.int64()]
F64 = Annotated[float, pa.float64()]


@dataclass(frozen=True, kw_only=True)
class StepMetrics:
    """One optimiser step of the update: one row of `updates`. UPDATES is generated from these
    fields (Arrow type from the annotation; `| None` = nullable), the update fills them by name,
    and nothing else lists them. The defaults describe a step that trained nothing (every group
    had equal rewards), which is still recorded."""

    iteration: I32
    epoch: I32 = 0
    step: I32 = 0  # optimiser step inside the iteration
    global_step: I64  # optimiser steps since the run began
    loss: F64 = 0.0  # policy_loss + kl_beta * kl
    policy_loss: F64 = 0.0
    kl: F64 | None = None  # mean per-token KL estimate to v0; null when kl_beta = 0
    clip_frac_low: F64 = 0.0  # tokens clipped at 1 - eps_low (A < 0)
    clip_frac_high: F64 = 0.0  # tokens clipped at 1 + eps_high (A > 0)
    ratio_mean: F64 = 1.0
    approx_kl: F64 = 0.0  # mean(old_logp - new_logp): drift from the sampler
    entropy: F64 = 0.0  # mean per-token entropy of the policy
    grad_norm: F64 = 0.0  # before clipping
    lr: F64 = 0.0
    tokens: I64 = 0
    sequences: I64 = 0
    micro_batches: I32 = 0
    micro_batch_tokens: I32 | None = None  # the token budget the step ran with (update.micro_batch_tokens, "auto" settled)
    groups_used: I32 = 0
    groups_dropped: I32 = 0  # zero-variance groups: no signal
    truncated_masked: I32 = 0  # responses left out by mask_truncated
    reward_mean: F64 = 0.0  # over all scored rows
    logprobs_filled: I32 = 0  # imported responses without sampling logprobs: computed under v_i before the first step
    # engine/trainer mismatch: |rollout logprob - trainer logprob| of the same tokens, before any step
    logprob_diff_mean: F64 | None = None
    logprob_diff_max: F64 | None = None
    tis_weight_mean: F64 | None = None  # mean importance weight (TIS or MIS); null when tis_cap = mis_cap = 0
    is_weight_max: F64 | None = None  # largest pi_v_i / pi_rollout before the cap; null without TIS / MIS
    is_capped_frac: F64 | None = None  # tokens truncated (TIS) or masked (MIS) at the cap; null without TIS / MIS
    staleness: I32 = 0  # iteration - the rollouts' policy_version (rollout.max_staleness; 0 = on-policy)
    seconds: F64 = 0.0
    peak_memory_mb: F64 = 0.0  # CUDA: max allocated; CPU: process peak RSS
    world_size: I32 = 0


def _arrow_schema(row: type) -> pa.Schema:
    """An Arrow schema from a dataclass whose fields are annotated I32 / I64 / F64 (or `| None`)."""
    fields = []
    for name, hint in get_type_hints(row, include_extras=True).items():
        args = get_args(hint)
        nullable = type(None) in args
        if nullable:
            hint = next(a for a in args if a is not type(None))
        fields.append(pa.field(name, get_args(hint)[1], nullable=nullable))
    return pa.schema(fields)


UPDATES = _arrow_schema(StepMetrics)

# evaluate(i)'s verdict columns: the same as training's, taken from SCORES (the same verifiers and weights)
EVAL_SCORE_COLUMNS = (
    "task",
    "extracted_answer",
    "extraction",
    "format_ok",
    "correct",
    "reward",
    "verifier",
    "verifier_error",
    "reason",
)
EVALS = pa.schema(
    [
        pa.field("iteration", pa.int32(), nullable=False),  # = policy_version: evaluate(i) scores policy v_i
        pa.field("prompt_id", pa.string(), nullable=False),  # held-out problems only (split = 'test')
        pa.field("sample_idx", pa.int32(), nullable=False),  # 0..eval.samples-1
        pa.field("policy_version", pa.int32(), nullable=False),
        pa.field("engine", pa.string(), nullable=False),
        pa.field("temperature", pa.float32(), nullable=False),
        pa.field("response_text", pa.string(), nullable=False),
        pa.field("num_response_tokens", pa.int32(), nullable=False),
        pa.field("finish_reason", pa.string(), nullable=False),
        *(SCORES.field(name) for name in EVAL_SCORE_COLUMNS),
    ]
)

# name -> schema; also the view names of `rlvr sql`. `scores` is the run's own scoring;
# `scorings` holds every scoring (the default's rows and each `rlvr rescore` name's), side by side.
TABLES: dict[str, pa.Schema] = {
    "problems": PROBLEMS,
    "rollouts": ROLLOUTS,
    "scores": SCORES,
    "updates": UPDATES,
    "evals": EVALS,
    "scorings": SCORES,
}

# ---- `rlvr eval` folders -----------------------------------------------------------------
# `rlvr eval ... --out OUT` writes one evaluation as plain Parquet files, OUT/<table>.parquet, and
# OUT/eval.json (EVAL_RECORD: a commit record listing the files with their sha256, written last).
# `rlvr sql OUT "..."` gives each file a read-only view of the same name; any Parquet reader works too
# (duckdb: SELECT * FROM 'OUT/summary.parquet').

# one row per response, the columns of a run's `evals` (responses and their verdicts side by side); a
# model folder outside a run has policy_version NULL and is sampled with iteration 0's seeds, as evaluate(0)
# samples a run's base model
EVAL_RESPONSES = pa.schema([f.with_nullable(True) if f.name == "policy_version" else f for f in EVALS])
EVAL_SUMMARY = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),  # the folder whose weights were evaluated
        pa.field("run", pa.string()),  # the run folder; NULL for `rlvr eval --model`
        pa.field("policy_version", pa.int32()),  # N of `--version N`; NULL for `rlvr eval --model`
        pa.field("config_hash", pa.string(), nullable=False),  # of the config evaluated with (the run's, with any --task/--set)
        pa.field("split", pa.string(), nullable=False),  # the problems' split: "test" (held-out) or "train"
        pa.field("problems", pa.int32(), nullable=False),
        pa.field("samples", pa.int32(), nullable=False),  # n: responses per problem
        pa.field("temperature", pa.float64(), nullable=False),  # 0 = greedy
        pa.field("accuracy", pa.float64(), nullable=False),  # correct responses / responses (= pass@1)
        pa.field("reward_mean", pa.float64(), nullable=False),
        pa.field("engine", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),  # run.seed: every response's seed derives from it
        pa.field("generation_seconds", pa.float64(), nullable=False),
        pa.field("created_at", pa.string(), nullable=False),
    ]
)
# pass@k for k = 1..samples: the unbiased estimator of Chen et al. 2021, averaged over the problems
PASS_AT_K = pa.schema([pa.field("k", pa.int32(), nullable=False), pa.field("pass_at_k", pa.float64(), nullable=False)])
EVAL_FOLDER_TABLES: dict[str, pa.Schema] = {
    "problems": PROBLEMS,  # the problems evaluated (one row each)
    "responses": EVAL_RESPONSES,
    "summary": EVAL_SUMMARY,  # one row
    "pass_at_k": PASS_AT_K,
}
EVAL_RECORD = "eval.json"


def eval_table_path(root: Path, table: str) -> Path:
    """OUT/<table>.parquet of an `rlvr eval` folder."""
    if table not in EVAL_FOLDER_TABLES:
        raise KeyError(f"unknown eval-folder table {table!r}; known: {', '.join(EVAL_FOLDER_TABLES)}")
    return root / f"{table}.parquet"


# ---- policy versions ----------------------------------------------------------------------
# policy/vN is a transformers folder plus TRAINER_STATE: the optimiser's moments, the scheduler, RNG and
# data cursor, which only the next update reads (about twice the weights in fp32 AdamW)
TRAINER_STATE = "trainer_state.pt"


# ---- LoRA checkpoints (DESIGN.md, "LoRA adapters") ----------------------------------------
# policy/vN of a LoRA run (N >= 1) holds an adapter, not full weights: PEFT's two files, the base's
# config.json and tokenizer, trainer_state.pt, and BASE_REF naming the base (v0) by path and sha256
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
BASE_REF = "base_model.json"  # {"path": "../v000000", "weights": {"model.safetensors": "<sha256>"}}


# ---- stages -------------------------------------------------------------------------------

PREPARE = "prepare"
ROLLOUT = "rollout"
VERIFY = "verify"
UPDATE = "update"
EVALUATE = "evaluate"  # optional (config eval.every): evaluate(i) scores policy v_i on the held-out split
RESCORE_PREFIX = "rescore."  # `rlvr rescore --name N` commits stage "rescore.N" per iteration into scorings/N/
ITERATION_STAGES: tuple[str, ...] = (ROLLOUT, VERIFY, UPDATE)
STAGE_TABLE = {PREPARE: "problems", ROLLOUT: "rollouts", VERIFY: "scores", UPDATE: "updates", EVALUATE: "evals"}

PARTS_OF = ".part-"  # rollout.shards = K > 1: "rollout.part-2-of-4" is part 2's stage (part_stage)
NODES_OF = ".node-"  # update.nnodes = N > 1: "update.node-2-of-4" is the update's node 2 (node_stage)

PARQUET_COMPRESSION = "zstd"
TMP_PREFIX = ".tmp-"  # in-progress outputs; never matched by a reader's glob


ITERATION_PREFIX = "iteration="
ITERATION_GLOB = f"{ITERATION_PREFIX}*"  # every iteration folder, e.g. paths.stages.glob(ITERATION_GLOB)


def iteration_part(iteration: int) -> str:
    """Hive-style folder name: iteration=000003."""
    if iteration < 0:
        raise ValueError(f"iteration must be >= 0, got {iteration}")
    return f"{ITERATION_PREFIX}{iteration:06d}"


def iteration_of(path: str | Path) -> int | None:
    """The iteration an `iteration=NNNNNN` folder holds (iteration_part's inverse): 3 for
    `.../_stages/iteration=000003`; None for any other name (`_stages/prepare.json`'s folder)."""
    name = Path(path).name
    return int(name.removeprefix(ITERATION_PREFIX)) if name.startswith(ITERATION_PREFIX) else None


def part_stage(stage: str, part: int, parts: int) -> str:
    """The stage name of part `part` (0-based) of `parts`: 'rollout.part-1-of-2' for part 0 of 2. Its
    record sits beside the stage's; its outputs in part_folder() under the stage's folder."""
    if not 0 <= part < parts:
        raise ValueError(f"part {part} of {parts}: want 0 <= part < parts")
    width = len(str(parts))
    return f"{stage}{PARTS_OF}{part + 1:0{width}d}-of-{parts}"


def split_part(stage: str) -> tuple[str, int | None, int | None]:
    """part_stage's inverse: (stage, part, parts); (stage, None, None) for a whole stage's name."""
    base, sep, rest = stage.partition(PARTS_OF)
    if not sep:
        return stage, None, None
    n, _, k = rest.partition("-of-")
    return base, int(n) - 1, int(k)


def node_stage(stage: str, node: int, nodes: int) -> str:
    """The name of node `node` (0-based) of a stage that runs on `nodes` machines at once (update.nnodes):
    'update.node-1-of-2'. Unlike a part it commits nothing of its own: node 0 commits the stage."""
    if not 0 <= node < nodes:
        raise ValueError(f"node {node} of {nodes}: want 0 <= node < nodes")
    return f"{stage}{NODES_OF}{node + 1:0{len(str(nodes))}d}-of-{nodes}"


def split_node(stage: str) -> tuple[str, int | None, int | None]:
    """node_stage's inverse: (stage, node, nodes); (stage, None, None) for any other name."""
    base, sep, rest = stage.partition(NODES_OF)
    if not sep:
        return stage, None, None
    n, _, k = rest.partition("-of-")
    return base, int(n) - 1, int(k)


def base_stage(stage: str) -> str:
    """The stage a part or a node belongs to ('rollout.part-1-of-2' -> 'rollout'); the name itself else."""
    return split_node(split_part(stage)[0])[0]


def part_folder(part: int, parts: int) -> str:
    """A part's output folder inside its stage's: 'part-1-of-2'."""
    return part_stage("", part, parts).lstrip(".")


def policy_name(version: int) -> str:
    return f"v{version:06d}"


def shard_name(index: int) -> str:
    return f"part-{index:06d}.parquet"


@dataclass(frozen=True)
class RunPaths:
    """Every path inside one run folder. A run on object storage (uri = 's3://bucket/prefix') has the
    same layout in a local working copy at `root` that the store keeps (rlvr.store.workspace)."""

    root: Path
    uri: str | None = None  # the run's object-store location; None: root is the run itself

    @property
    def location(self) -> str:
        """What the user calls the run: its URI, or its folder (as messages and commands name it)."""
        return self.uri or str(self.root)

    @property
    def config(self) -> Path:
        return self.root / "run.toml"

    @property
    def stages(self) -> Path:
        return self.root / "_stages"

    def table_root(self, table: str) -> Path:
        if table not in TABLES:
            raise KeyError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        return self.root / table

    def table_dir(self, table: str, iteration: int | None) -> Path:
        """problems/ has no iterations; the others are partitioned by iteration."""
        root = self.table_root(table)
        return root if iteration is None else root / iteration_part(iteration)

    def scoring_dir(self, name: str, iteration: int) -> Path:
        """A named rescoring's shards of one iteration (the default scoring lives in scores/)."""
        return self.root / "scorings" / name / iteration_part(iteration)

    def policy_dir(self, version: int) -> Path:
        return self.root / "policy" / policy_name(version)

    @property
    def tracking(self) -> Path:
        """Experiment trackers' side files (rlvr/views/track.py): what was sent where, and the default
        TensorBoard / W&B folders. Not committed data: no record lists them and `rlvr sql` never reads them."""
        return self.root / "tracking"

    @property
    def pruned_dir(self) -> Path:
        return self.stages / "pruned"

    def pruned_record(self, version: int) -> Path:
        """Which files of policy v_version retention deleted (written before they are deleted)."""
        return self.pruned_dir / f"{policy_name(version)}.json"

    def record(self, stage: str, iteration: int | None) -> Path:
        if iteration is None:
            return self.stages / f"{stage}.json"
        return self.stages / iteration_part(iteration) / f"{stage}.json"
