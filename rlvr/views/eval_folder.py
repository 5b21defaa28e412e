"""`rlvr eval`: one policy, a run's version or any HF model folder, evaluated into a folder of Parquet files.

    rlvr eval runs/demo --version 3 --out evals/demo-v3        # the run's held-out split and [eval] settings
    rlvr eval runs/demo --version 3 --task logic --out evals/demo-v3-logic
    rlvr eval --model ~/models/my-model --task arithmetic --out evals/base
    rlvr eval --model FOLDER --config my.toml --samples 8 --temperature 0.8 --out evals/pass8
    rlvr sql evals/demo-v3 "SELECT accuracy, problems FROM summary"

What is evaluated: policy vN of a run, with the run's frozen config ([prompt], [verify], rollout's
max_new_tokens and engine, run.seed) and its committed problems; or a model folder with a config
(--config, default the defaults). --task NAME (a shipped task's default problems) and --set
task.FIELD=V (a user's dataset: task.path = ...) load other problems, as prepare loads them; on a
run only task.*, eval.* and where-it-runs settings (rollout.engine, rollout.python,
rollout.batch_size, rollout.vllm_*, update.device) may change, since its prompt and verifiers are
what it was trained and evaluated with. The prompts are rlvr.problems.prompts.prompt_ids with the
evaluated folder's tokenizer; responses and verdicts come from rlvr.stages.evaluation.evaluate_policy,
the evaluate stage's own function, so `rlvr eval RUN --version N` with the run's [eval] settings
gives the run's `evals` of iteration N, response for response.

The folder holds rlvr.schema.EVAL_FOLDER_TABLES as OUT/<table>.parquet and OUT/eval.json (a commit
record: the files' sha256, what was evaluated, the summary). It is written into a temporary sibling
and renamed into place; an --out that exists and is not empty is refused, a failure leaves none.

Test: tests/integration/test_eval_export.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from rlvr.config import Config, apply_overrides, hash_data, load_config, parse_config
from rlvr.errors import RlvrError
from rlvr.schema import (
    EVAL_RECORD,
    EVAL_RESPONSES,
    EVAL_SUMMARY,
    PASS_AT_K,
    PREPARE,
    PROBLEMS,
    eval_table_path,
)
from rlvr.store.commit import fetch_policy, write_table
from rlvr.store.folders import check_new_folder, new_folder, write_folder_record
from rlvr.store.records import verified_record
from rlvr.store.retention import kept_version
from rlvr.store.run import open_run

if TYPE_CHECKING:
    from rlvr.stages.evaluation import EvalSpec

# what `rlvr eval RUN --set` may change: the problems, the evaluation, where it runs; never the prompt or verifiers
RUN_OVERRIDABLE = (
    "task.",
    "eval.",
    "rollout.engine",
    "rollout.python",
    "rollout.batch_size",
    "rollout.vllm_",
    "rollout.device",
    "update.device",
)
SPLITS = ("test", "train")


class EvalError(RlvrError, ValueError):
    """An `rlvr eval` that cannot run as asked; the message says what to give instead."""


@dataclass(frozen=True, kw_only=True)
class EvalRequest:
    """One `rlvr eval` command line: a run (and version) or a model folder (and config), into `out`.
    None for samples, temperature and prompts means the config's [eval] values."""

    out: Path
    run: str | Path | None = None  # a run folder or s3://bucket/prefix
    version: int | None = None
    model: Path | None = None
    config: Path | None = None
    task: str | None = None
    overrides: tuple[str, ...] = ()
    split: str = "test"
    samples: int | None = None
    temperature: float | None = None
    prompts: int | None = None


@dataclass(frozen=True)
class Source:
    """What is evaluated: the folder, the config it is evaluated with, the problems (every split: the
    few-shot rows too), and where it came from (run and version; both None for a model folder)."""

    policy_dir: Path
    config: Config
    config_hash: str
    rows: list[dict]
    run: str | None  # as the user names it: a folder or s3://bucket/prefix
    version: int | None
    hide: tuple[Path, ...] = ()  # the run's local folder (or working copy), which the code sandbox must not see


def evaluate_into(req: EvalRequest) -> dict:
    """Evaluate what `req` names into the folder req.out; returns the summary row (EVAL_SUMMARY)."""
    from transformers import AutoTokenizer

    from rlvr.problems.prompts import prompt_ids
    from rlvr.stages.evaluation import eval_prompts

    check_new_folder(Path(req.out).absolute(), flag="--out")  # before a model is loaded
    if req.split not in SPLITS:
        raise EvalError(f"--split {req.split!r}: give test (the held-out problems) or train")
    src = source(req)
    cfg = src.config
    text = prompt_ids(AutoTokenizer.from_pretrained(src.policy_dir), src.rows, cfg.prompt, req.split)
    if not text:
        why = " (task.n_test = 0); give --split train," if req.split == "test" else "; give"
        raise EvalError(
            f"no {req.split} problems to evaluate on{why} or other problems with --task NAME or --set task.FIELD=VALUE"
        )
    ids = eval_prompts(text, limit=cfg.eval.prompts if req.prompts is None else req.prompts, seed=cfg.run.seed)
    with new_folder(req.out, flag="--out") as tmp:
        return _write(tmp, src, req, ids=ids, text=text)


def source(req: EvalRequest) -> Source:
    """The Source `req` names: RUN [--version N] or --model FOLDER [--config C], with --task and --set."""
    if (req.run is None) == (req.model is None):
        raise EvalError("give a run folder (rlvr eval RUN --version N) or --model FOLDER, one of the two")
    if req.run is not None and req.config is not None:
        raise EvalError(
            "--config is for --model; a run is evaluated with its own config (change its problems with --task or --set task.F=V)"
        )
    if req.model is not None and req.version is not None:
        raise EvalError("--version is for a run folder; --model evaluates the folder as it is")
    return _run_source(req) if req.run is not None else _model_source(req)


def _run_source(req: EvalRequest) -> Source:
    run = open_run(req.run)
    for item in req.overrides:
        if not item.strip().startswith(RUN_OVERRIDABLE):
            raise EvalError(
                f"--set {item!r}: on a run, --set changes only {', '.join(RUN_OVERRIDABLE)} (its prompt and verifiers "
                "are the run's); for other settings evaluate its folder with --model policy/vN --config"
            )
    version = kept_version(run.paths, req.version)
    data = _with_task(run.data, req)
    cfg = parse_config(data, "--set")
    if cfg.task == run.config.task:  # the run's own problems, as committed
        problems = verified_record(run.paths, PREPARE, None)
        rows = pq.read_table(problems.parquet_files(run.paths.root)).to_pylist()
    else:
        rows = _load_problems(cfg)
    policy = fetch_policy(run.paths, version)  # on object storage: its files into the working copy, checked
    return Source(policy, cfg, hash_data(data), rows, run.paths.location, version, hide=(run.paths.root,))


def _model_source(req: EvalRequest) -> Source:
    folder = Path(req.model).absolute()
    if not (folder / "config.json").is_file():
        raise EvalError(f"--model {req.model}: no config.json there; give an HF-format model folder (config, weights, tokenizer)")
    data = load_config(req.config).model_dump(mode="json", exclude_none=True)
    data = _with_task(data, req)
    cfg = parse_config(data, "--set")
    return Source(folder, cfg, hash_data(data), _load_problems(cfg), None, None)


def _with_task(data: dict, req: EvalRequest) -> dict:
    """Config data with --task NAME (a [task] of that shipped task's defaults) and then --set applied."""
    if req.task is not None:
        data = {**data, "task": {"name": req.task}}
    return apply_overrides(data, list(req.overrides))


def _load_problems(cfg: Config) -> list[dict]:
    from rlvr.problems.datasets import load_problems

    return load_problems(cfg.task, cfg.prompt)


def _write(tmp: Path, src: Source, req: EvalRequest, *, ids: list[str], text: dict[str, list[int]]) -> dict:
    """The folder's files into `tmp` (not yet renamed): problems, responses, summary, pass_at_k, eval.json last."""
    from rlvr.stages.evaluation import EvalSpec, evaluate_policy, pass_at

    cfg, t0 = src.config, time.perf_counter()
    chosen = set(ids)
    problems = eval_table_path(tmp, "problems")
    write_table(sorted((r for r in src.rows if r["prompt_id"] in chosen), key=lambda r: r["prompt_id"]), PROBLEMS, problems)
    spec = EvalSpec(
        config=cfg,
        policy_dir=src.policy_dir,
        version=src.version or 0,  # a model folder is sampled with iteration 0's seeds, as a run's base model is
        problems=[problems],
        samples=cfg.eval.samples if req.samples is None else req.samples,
        temperature=cfg.eval.temperature if req.temperature is None else req.temperature,
        hide=(tmp, *src.hide),
    )
    rows, stats = evaluate_policy(spec, ids, text)
    if src.version is None:
        rows = rows.set_column(
            rows.schema.get_field_index("policy_version"), "policy_version", pa.nulls(rows.num_rows, pa.int32())
        )
    n = write_table(rows.select(EVAL_RESPONSES.names), EVAL_RESPONSES, eval_table_path(tmp, "responses"))
    summary = _summary(src, spec, stats, problems=len(ids), split=req.split)
    write_table([summary], EVAL_SUMMARY, eval_table_path(tmp, "summary"))
    curve = pass_at(rows, list(range(1, spec.samples + 1)), problems=len(ids))
    write_table([{"k": k, "pass_at_k": v} for k, v in curve.items()], PASS_AT_K, eval_table_path(tmp, "pass_at_k"))
    inputs = {"model": str(src.policy_dir), "run": summary["run"], "version": src.version, "config": src.config_hash}
    inputs |= {"split": req.split, "prompts": sorted(ids), "samples": spec.samples, "temperature": spec.temperature}
    write_folder_record(tmp, EVAL_RECORD, inputs=inputs, rows=n, seconds=time.perf_counter() - t0, extra=summary)
    return summary


def _summary(src: Source, spec: EvalSpec, stats: dict, *, problems: int, split: str) -> dict:
    """The summary row (EVAL_SUMMARY) of one evaluation."""
    return {
        "model": str(src.policy_dir),
        "run": src.run,
        "policy_version": src.version,
        "config_hash": src.config_hash,
        "split": split,
        "problems": problems,
        "samples": spec.samples,
        "temperature": spec.temperature,
        "accuracy": stats["accuracy"],
        "reward_mean": stats["reward_mean"],
        "engine": stats["engine"],
        "seed": src.config.run.seed,
        "generation_seconds": stats["generation_seconds"],
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
