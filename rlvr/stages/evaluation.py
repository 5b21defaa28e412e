"""evaluate(run, i), and the one evaluation that both it and `rlvr eval` run.

`evaluate_policy(spec, ids, text)` samples spec.samples responses per prompt with one policy folder
(rlvr.stages.generation's engine and `_generate`, seeds apart from training's), scores them with
rlvr.verify.scoring (the verify stage's scoring: the same verifiers and weights), and returns the
rows with the EVALS columns and the figures. The evaluate stage calls it for policy v_i of its run
and commits evals/iteration=i/; `rlvr eval` (rlvr.views.eval_folder) calls it for any version of a
run, or any model folder, and writes an eval folder. Same spec, same rows: `rlvr eval RUN --version
N` reproduces the run's own evals of iteration N.

pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
Code", eq. 1): with n samples of which c are correct, 1 - C(n-c, k) / C(n, k), averaged over problems.

Test: tests/integration/test_evaluate.py, tests/integration/test_eval_export.py, tests/unit/stages/test_stages.py (eval_stats).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rlvr.config import Config, ConfigError
from rlvr.rollout import engines
from rlvr.rollout.sampler import Sampling
from rlvr.schema import EVAL_SCORE_COLUMNS, EVALS, EVALUATE, shard_name
from rlvr.stages.base import StageResult, _require_weights, _stage
from rlvr.stages.generation import _generate, _generation_inputs, _policy_engine, _prompt_ids, iteration_prompts
from rlvr.stages.parts import merge_parts, merged_extra, part_prompts, stage_and_folder
from rlvr.store.commit import Outcome, StageTx, write_table
from rlvr.store.records import CommitRecord
from rlvr.store.run import Run, open_run
from rlvr.verify import scoring

log = logging.getLogger("rlvr")


@dataclass(frozen=True, kw_only=True)
class EvalSpec:
    """What one evaluation samples with and scores against."""

    config: Config  # its [rollout] engine and max_new_tokens, [verify], run.seed, update.device
    policy_dir: Path  # the HF folder evaluated
    version: int  # the seeds' iteration, and the rows' iteration and policy_version
    problems: list[Path]  # PROBLEMS Parquet files the responses are scored against
    samples: int  # n: responses per prompt
    temperature: float  # 0 = greedy
    hide: Sequence[Path] = ()  # folders the code sandbox must not see (the run store, the output)


def run_spec(run: Run, problems: CommitRecord, version: int) -> EvalSpec:
    """The spec of the run's own evaluation of policy v_version: its [eval] samples and temperature."""
    cfg = run.config
    return EvalSpec(
        config=cfg,
        policy_dir=run.paths.policy_dir(version),
        version=version,
        problems=problems.parquet_files(run.paths.root),
        samples=cfg.eval.samples,
        temperature=cfg.eval.temperature,
        hide=(run.paths.root,),
    )


def eval_prompts(text: dict[str, list[int]], *, limit: int, seed: int) -> list[str]:
    """The prompt ids evaluated: all of them in order, or with `limit` (eval.prompts) the same
    `limit` at every evaluation (a draw of iteration 0), so the numbers compare."""
    ids = sorted(text)
    return iteration_prompts(ids, limit, seed=seed, iteration=0, round=0) if limit else ids


def evaluate(run_dir: str | Path, iteration: int, part: int | None = None) -> StageResult:
    """Policy v_i on the held-out split -> evals/iteration=i/: eval.samples responses per problem at
    eval.temperature (greedy by default), scored by the same verifiers and weights as training. With
    rollout.shards = K > 1, as rollout(i): `part` p evaluates its share of the problems, and without a
    part the stage is committed from its parts, its figures computed over all of their rows."""
    run = open_run(run_dir)
    cfg, i, parts = run.config, iteration, run.config.rollout.shards
    if part is None and parts > 1:
        return merge_parts(run, EVALUATE, i, extra=lambda recs: _merged_figures(run, recs))
    stage, out = stage_and_folder(run, EVALUATE, i, part)
    problems, inputs = _generation_inputs(run, stage, i)

    def body(tx: StageTx) -> Outcome:
        _require_weights(run, i, f"evaluate({i})")
        text = _prompt_ids(run, problems, i, "test")
        if not text:
            raise ConfigError(
                "evaluation needs held-out problems but this run has none (task.n_test = 0): "
                "start a run with task.n_test > 0, or set eval.every = 0"
            )
        ids = eval_prompts(text, limit=cfg.eval.prompts, seed=cfg.run.seed)
        if part is not None:
            ids = part_prompts(ids, part, parts)
        rows, stats = evaluate_policy(run_spec(run, problems, i), ids, text)
        n = write_table(rows.select(EVALS.names), EVALS, tx.output(out) / shard_name(0))
        log.info(
            "evaluate %d: policy v%d on %d held-out problems x %d: accuracy %.3f, pass@%d %.3f",
            i,
            i,
            len(ids),
            cfg.eval.samples,
            stats["accuracy"],
            cfg.eval.samples,
            stats[f"pass_at_{cfg.eval.samples}"],
        )
        return Outcome(n, stats)

    return _stage(run, stage, i, inputs, body)


def _merged_figures(run: Run, recs: list[CommitRecord]) -> dict:
    """evaluate(i)'s figures over all of its parts' rows (eval_stats), the engine, the slowest part's
    generation seconds, and the parts (rlvr.stages.parts.merged_extra)."""
    cfg, root = run.config, run.paths.root
    rows = pa.concat_tables([pq.read_table(f) for r in recs for f in r.parquet_files(root)])
    stats = eval_stats(
        rows, problems=sum(r.extra["problems"] for r in recs), samples=cfg.eval.samples, temperature=cfg.eval.temperature
    )
    return merged_extra(recs) | stats


def evaluate_policy(spec: EvalSpec, ids: list[str], text: dict[str, list[int]]) -> tuple[pa.Table, dict]:
    """The evaluation of `ids` (`text`: their prompt token ids, from rlvr.problems.prompts.prompt_ids)
    by spec.policy_dir: (rows with the EVALS columns in (prompt_id, sample_idx) order, eval_stats'
    figures with the engine and the generation seconds)."""
    tok, got, _ = _policy_engine(spec.config, spec.policy_dir)
    t0 = time.perf_counter()
    rows = _eval_rows(spec, ids, text, engine=got.engine, tok=tok)
    stats = eval_stats(rows, problems=len(ids), samples=spec.samples, temperature=spec.temperature)
    stats |= {"engine": got.name, "generation_seconds": round(time.perf_counter() - t0, 3)}
    return rows, stats


def _eval_rows(spec: EvalSpec, ids: list[str], text: dict[str, list[int]], *, engine: engines.Engine, tok) -> pa.Table:
    """spec.samples responses per prompt (seeds apart from training's), scored, as EVALS columns in
    (prompt_id, sample_idx) order; the token ids themselves are not kept."""
    cfg = spec.config
    sampling = Sampling(cfg.rollout.max_new_tokens, spec.temperature, 1.0)
    with tempfile.TemporaryDirectory(prefix="rlvr-eval-") as tmp:
        new = _generate(
            engine,
            tok,
            cfg,
            spec.version,
            ids,
            text,
            Path(tmp),
            policy_dir=spec.policy_dir,
            first_shard=0,
            samples=spec.samples,
            sampling=sampling,
            seed_tag="eval/",
            label="evaluate",
        )
        scored = scoring.score(
            new["shards"], spec.problems, cfg.verify, max_new_tokens=cfg.rollout.max_new_tokens, hide=list(spec.hide)
        )
        gen = pq.read_table(new["shards"]).sort_by([("prompt_id", "ascending"), ("sample_idx", "ascending")])
    key = ["prompt_id", "sample_idx"]
    columns = [
        "iteration",
        *key,
        "policy_version",
        "engine",
        "temperature",
        "response_text",
        "num_response_tokens",
        "finish_reason",
    ]
    rows = gen.select(columns).join(scored.select([*key, *EVAL_SCORE_COLUMNS]), key)
    return rows.sort_by([("prompt_id", "ascending"), ("sample_idx", "ascending")])


def eval_stats(rows: pa.Table, *, problems: int, samples: int, temperature: float) -> dict:
    """An evaluation's figures from its scored rows (`samples` per problem): accuracy over every
    response, pass@samples (with k = n the estimator is the share of problems with a correct one),
    the mean reward."""
    correct = rows["correct"].to_pylist()
    return {
        "problems": problems,
        "samples": samples,
        "temperature": temperature,
        "accuracy": sum(correct) / max(rows.num_rows, 1),
        f"pass_at_{samples}": pass_at(rows, [samples], problems=problems)[samples],
        "reward_mean": pc.mean(rows["reward"]).as_py(),
    }


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one problem with n samples, c of them correct (Chen et al. 2021, eq. 1):
    1 - C(n-c, k) / C(n, k), the chance that k of the n drawn without replacement hold a correct
    one. Exact in integers, rounded once (the paper's product form exists for floats).

    >>> pass_at_k(5, 2, 2)  # 1 - C(3, 2) / C(5, 2) = 1 - 3/10
    0.7
    >>> pass_at_k(4, 0, 1), pass_at_k(4, 1, 4), pass_at_k(4, 1, 1)
    (0.0, 1.0, 0.25)
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))  # comb(m, k) = 0 for m < k: every draw holds a correct one


def pass_at(rows: pa.Table, ks: list[int], *, problems: int) -> dict[int, float]:
    """k -> pass@k averaged over `problems` (a problem without rows counts 0), from scored rows with
    prompt_id and correct; each problem's n is its row count."""
    counts: dict[str, list[int]] = {}
    for pid, ok in zip(rows["prompt_id"].to_pylist(), rows["correct"].to_pylist(), strict=True):
        n_c = counts.setdefault(pid, [0, 0])
        n_c[0] += 1
        n_c[1] += bool(ok)
    return {k: sum(pass_at_k(n, c, k) for n, c in counts.values()) / problems for k in ks}
