"""The stages of a run as plain functions: prepare(run), rollout(run, i), verify(run, i), update(run, i).

Each one is idempotent: it computes its input fingerprint (config hash + the digests of the
upstream outputs it reads) and returns at once when a commit record with that fingerprint
exists. Otherwise it writes its outputs through rlvr.store (temp folder, rename, record last).
Iteration i samples with policy v_i and its update writes v_{i+1}.

No Prefect here: tasks/ wraps these functions; tests call them directly.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from transformers import AutoTokenizer
from transformers.utils import logging as hf_logging

import rlvr.data as data
from rlvr import engines
from rlvr import verify as verifier
from rlvr.rollout import Request, Sampling, derive_seed, render_prompt_ids
from rlvr.progress import progress
from rlvr.run import Run, open_run
from rlvr.schema import EVALS, EVALUATE, PREPARE, PROBLEMS, ROLLOUT, ROLLOUTS, SCORES, UPDATE, VERIFY, shard_name
from rlvr.store import CommitRecord, begin_stage, committed, read_record, write_table
from rlvr.tiny import ensure_tiny_model
from rlvr.update import UpdateSpec, load_policy, resolve_device, run_update

log = logging.getLogger("rlvr")
hf_logging.disable_progress_bar()  # per-file "Loading weights" bars drown the stage logs


class StageOrderError(RuntimeError):
    pass


class ContextLengthError(ValueError):
    """A prompt that does not fit the model's context with rollout.max_new_tokens."""


@dataclass(frozen=True)
class StageResult:
    stage: str
    iteration: int | None
    skipped: bool  # True: a matching commit record existed, nothing was recomputed
    rows: int
    seconds: float  # of the committed attempt (not of this call, when skipped)
    created_at: str

    def as_dict(self) -> dict:
        return asdict(self)


def _result(rec: CommitRecord, skipped: bool) -> StageResult:
    if skipped:
        log.info("%s %s: committed already, skipped", rec.stage, "" if rec.iteration is None else rec.iteration)
    return StageResult(rec.stage, rec.iteration, skipped, rec.rows, rec.seconds, rec.created_at)


def _upstream(run: Run, stage: str, iteration: int | None, needed_by: str) -> CommitRecord:
    rec = read_record(run.paths.record(stage, iteration))
    if rec is None:
        where = "" if iteration is None else f" of iteration {iteration}"
        raise StageOrderError(f"{needed_by} needs stage {stage}{where} committed first; run `rlvr resume {run.paths.root}`")
    return rec


def _policy_record(run: Run, version: int, needed_by: str) -> CommitRecord:
    """The record that committed policy v_version: prepare for v0, update(v-1) after."""
    if version == 0:
        return _upstream(run, PREPARE, None, needed_by)
    return _upstream(run, UPDATE, version - 1, needed_by)


def iteration_prompts(prompt_ids: list[str], k: int, *, seed: int, iteration: int, round: int = 0,
                      exclude: frozenset[str] = frozenset()) -> list[str]:  # fmt: skip
    """k distinct prompt ids not in `exclude`, a deterministic function of (seed, iteration,
    round) and the id set. Round > 0 are dynamic-sampling top-ups."""
    pool = sorted(set(prompt_ids) - exclude)
    rng = np.random.default_rng([seed, iteration, round] if round else [seed, iteration])
    picks = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
    return [pool[j] for j in sorted(picks)]


# ---- prepare ------------------------------------------------------------------------------


def prepare(run_dir: str | Path) -> StageResult:
    """problems/*.parquet from the task generator, and policy v0 from the configured model."""
    run = open_run(run_dir)
    cfg, paths = run.config, run.paths
    inputs = {"config": run.config_hash}
    if rec := committed(paths, PREPARE, None, inputs):
        return _result(rec, skipped=True)
    with begin_stage(paths, PREPARE, None, inputs) as tx:
        base = Path(cfg.model.path) if cfg.model.path else ensure_tiny_model(cfg)
        if not (base / "config.json").is_file():
            raise FileNotFoundError(f"model.path = {str(base)!r} has no config.json; point it at a HF-format model folder")
        rows = data.problems(cfg.task)
        n = write_table(rows, PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
        model, tok = load_policy(base, torch.device("cpu"))
        pol = tx.output(paths.policy_dir(0))
        model.save_pretrained(pol)
        tok.save_pretrained(pol)
        rec = tx.commit(rows=n, extra={"base_model": str(base)})
    log.info("prepare: %d problems, policy v0 from %s", n, base)
    return _result(rec, skipped=False)


# ---- generation: rollout and evaluate ----------------------------------------------------------


def _generation_inputs(run: Run, stage: str, i: int) -> tuple[CommitRecord, dict]:
    """prepare's record and the fingerprint of a stage that generates with policy v_i from the problems."""
    name = f"{stage}({i})"
    problems = _upstream(run, PREPARE, None, name)
    policy = _policy_record(run, i, name)
    return problems, {"config": run.config_hash, "problems": problems.digest(), "policy": policy.digest()}


def _split_prompts(run: Run, problems: CommitRecord, split: str) -> dict[str, str]:
    """prompt_id -> prompt of one split ('train' | 'test') of the problems."""
    table = pq.read_table(problems.parquet_files(run.paths.root), columns=["prompt_id", "split", "prompt"])
    rows = table.filter(pc.equal(table["split"], split))
    return dict(zip(rows["prompt_id"].to_pylist(), rows["prompt"].to_pylist(), strict=True))


def _policy_engine(run: Run, i: int) -> tuple[AutoTokenizer, engines.Acquired, torch.device]:
    """Policy v_i's tokenizer and a generation engine holding v_i (from the pool: warm when it can be)."""
    cfg, policy_dir = run.config, run.paths.policy_dir(i)
    device = resolve_device(cfg.update.device)
    got = engines.acquire(cfg.rollout, policy_dir, device=device, seed=cfg.run.seed, max_model_len=_max_model_len(policy_dir))
    return AutoTokenizer.from_pretrained(policy_dir), got, device


def rollout(run_dir: str | Path, iteration: int) -> StageResult:
    """G responses per sampled prompt with policy v_i -> rollouts/iteration=i/."""
    run = open_run(run_dir)
    cfg, paths, i = run.config, run.paths, iteration
    problems, inputs = _generation_inputs(run, ROLLOUT, i)
    if rec := committed(paths, ROLLOUT, i, inputs):
        return _result(rec, skipped=True)

    with begin_stage(paths, ROLLOUT, i, inputs) as tx:
        text = _split_prompts(run, problems, "train")
        tok, got, device = _policy_engine(run, i)
        log.info("rollout %d: %s engine (%s), start %.1fs, weight load %.2fs", i, got.name,
                 "warm" if got.warm else "cold", got.start_seconds, got.weight_load_seconds)  # fmt: skip
        out = tx.output(paths.table_dir("rollouts", i))
        target = cfg.rollout.min_signal_groups or cfg.rollout.prompts_per_iteration
        chosen = iteration_prompts(list(text), cfg.rollout.prompts_per_iteration, seed=cfg.run.seed, iteration=i)
        used: set[str] = set()
        rounds: list[dict] = []
        shards: list[Path] = []
        t0 = time.perf_counter()
        for rnd in range(1 + cfg.rollout.dynamic_sampling_rounds):
            new = _generate(got.engine, tok, run, i, chosen, text, out, first_shard=len(shards))
            shards += new["shards"]
            used |= set(chosen)
            rounds.append({"round": rnd, "prompts": len(chosen), "rows": new["rows"], "tokens": new["tokens"]})
            if cfg.rollout.dynamic_sampling_rounds == 0:
                break
            # DAPO dynamic sampling (Yu et al. 2025, sec. 3.2): groups whose rewards are all equal carry
            # no signal; top up with fresh prompts until `target` groups have some, or rounds run out
            scored = verifier.score(new["shards"], problems.parquet_files(paths.root), cfg.verify,
                                    max_new_tokens=cfg.rollout.max_new_tokens, hide=[paths.root])  # fmt: skip
            rounds[-1]["signal_groups"] = len(set(pc.filter(scored["prompt_id"], pc.greater(scored["group_std"], 0)).to_pylist()))
            have = sum(r["signal_groups"] for r in rounds)
            if have >= target:
                break
            chosen = iteration_prompts(list(text), target - have, seed=cfg.run.seed, iteration=i, round=rnd + 1,
                                       exclude=frozenset(used))  # fmt: skip
            if not chosen:
                log.warning("rollout %d: dynamic sampling ran out of unused prompts", i)
                break
            log.info("rollout %d: %d/%d groups with signal after round %d; sampling %d more prompts", i, have, target,
                     rnd, len(chosen))  # fmt: skip
        secs = time.perf_counter() - t0
        n_rows, tokens = sum(r["rows"] for r in rounds), sum(r["tokens"] for r in rounds)
        rec = tx.commit(rows=n_rows, extra={"engine": got.name, "warm": got.warm, "device": str(device),
                                            "engine_start_seconds": round(got.start_seconds, 3),
                                            "weight_load_seconds": round(got.weight_load_seconds, 3),
                                            "generation_seconds": round(secs, 3), "tokens": tokens, "rounds": rounds,
                                            "tokens_per_s": round(tokens / max(secs, 1e-9), 1)})  # fmt: skip
    log.info("rollout %d: %d responses (%d prompts x G=%d, %d round(s)), %d tokens in %.1fs", i, n_rows, len(used),
             cfg.rollout.group_size, len(rounds), tokens, secs)  # fmt: skip
    return _result(rec, skipped=False)


def _max_model_len(policy_dir: Path) -> int:
    """Context the vLLM engine reserves: the model's own limit (prompts here are short)."""
    conf = json.loads((policy_dir / "config.json").read_text())
    return int(min(conf.get("max_position_embeddings", 2048), 4096))


def _generate(engine: engines.Engine, tok, run: Run, i: int, prompt_ids: list[str], text: dict[str, str], out: Path, *,
              first_shard: int, samples: int = 0, sampling: Sampling | None = None, seed_tag: str = "",
              label: str = "rollout") -> dict:  # fmt: skip
    """`samples` (default rollout.group_size) responses for each prompt id, written as shards
    part-{first_shard + k}; returns counts. `seed_tag` keeps evaluation seeds apart from training's."""
    cfg = run.config
    G = samples or cfg.rollout.group_size
    requests = [Request(pid, s, render_prompt_ids(tok, text[pid]), derive_seed(cfg.run.seed, i, seed_tag + pid, s))
                for pid in prompt_ids for s in range(G)]  # fmt: skip
    sampling = sampling or Sampling(cfg.rollout.max_new_tokens, cfg.rollout.temperature, cfg.rollout.top_p)
    context = _max_model_len(run.paths.policy_dir(i))
    longest = max(requests, key=lambda r: len(r.prompt_token_ids), default=None)
    if longest is not None and len(longest.prompt_token_ids) + sampling.max_new_tokens > context:
        fix = ("lower rollout.max_new_tokens, or use" if len(longest.prompt_token_ids) < context else "use")
        raise ContextLengthError(
            f"prompt {longest.prompt_id!r} has {len(longest.prompt_token_ids)} tokens; with rollout.max_new_tokens = "
            f"{sampling.max_new_tokens} that exceeds the model's context of {context} tokens: {fix} a model with a "
            "longer context (model.path)"
        )
    n_rows, tokens, shards, t0 = 0, 0, [], time.perf_counter()
    progress(label, i, done=0, total=len(requests), unit="responses")
    for k, batch in enumerate(engine.generate(requests, sampling)):  # one shard per batch: memory stays bounded
        rows = [
            {
                "iteration": i,
                "prompt_id": req.prompt_id,
                "sample_idx": req.sample_idx,
                "prompt_token_ids": req.prompt_token_ids,
                "response_token_ids": smp.token_ids,
                "response_logprobs": smp.logprobs,
                "response_text": tok.decode(smp.token_ids, skip_special_tokens=True),
                "num_response_tokens": len(smp.token_ids),
                "finish_reason": smp.finish_reason,
                "policy_version": i,
                "engine": engine.name,
                "temperature": sampling.temperature,
                "seed": req.seed,
            }
            for req, smp in batch
        ]
        tokens += sum(len(s.token_ids) for _, s in batch)
        shards.append(out / shard_name(first_shard + k))
        n_rows += write_table(rows, ROLLOUTS, shards[-1])
        progress(label, i, done=n_rows, total=len(requests), unit="responses")
        log.info("%s %d: %d/%d responses, %.0f tok/s", label, i, n_rows, len(requests),
                 tokens / max(time.perf_counter() - t0, 1e-9))  # fmt: skip
    return {"rows": n_rows, "tokens": tokens, "shards": shards}


# ---- verify -------------------------------------------------------------------------------


def verify(run_dir: str | Path, iteration: int) -> StageResult:
    """Score rollouts/iteration=i against problems -> scores/iteration=i/ (one DuckDB query)."""
    run = open_run(run_dir)
    paths, i = run.paths, iteration
    problems = _upstream(run, PREPARE, None, f"verify({i})")
    rollouts = _upstream(run, ROLLOUT, i, f"verify({i})")
    inputs = {"config": run.config_hash, "problems": problems.digest(), "rollouts": rollouts.digest()}
    if rec := committed(paths, VERIFY, i, inputs):
        return _result(rec, skipped=True)
    with begin_stage(paths, VERIFY, i, inputs) as tx:
        progress(VERIFY, i, done=0, total=rollouts.rows, unit="rows")
        table, stats = verifier.score_with_stats(rollouts.parquet_files(paths.root), problems.parquet_files(paths.root),
                                                 run.config.verify, max_new_tokens=run.config.rollout.max_new_tokens,
                                                 hide=[paths.root])  # fmt: skip
        n = write_table(table, SCORES, tx.output(paths.table_dir("scores", i)) / shard_name(0))
        progress(VERIFY, i, done=n, total=rollouts.rows, unit="rows")
        correct = sum(table["correct"].to_pylist())
        rec = tx.commit(rows=n, extra={"correct": correct, "reward_mean": pc.mean(table["reward"]).as_py(), **stats})
    log.info("verify %d: %d rows, %d correct", i, n, correct)
    return _result(rec, skipped=False)


# ---- evaluate -----------------------------------------------------------------------------

EVAL_COLUMNS = ["task", "extracted_answer", "format_ok", "correct", "reward", "verifier", "verifier_error", "reason"]


def evaluate(run_dir: str | Path, iteration: int) -> StageResult:
    """Policy v_i on the held-out split -> evals/iteration=i/: eval.samples responses per problem at
    eval.temperature (greedy by default), scored by the same verifiers and weights as training."""
    run = open_run(run_dir)
    cfg, paths, i = run.config, run.paths, iteration
    problems, inputs = _generation_inputs(run, EVALUATE, i)
    if rec := committed(paths, EVALUATE, i, inputs):
        return _result(rec, skipped=True)
    with begin_stage(paths, EVALUATE, i, inputs) as tx:
        problem_files = problems.parquet_files(paths.root)
        text = _split_prompts(run, problems, "test")
        if not text:
            raise ValueError("evaluation needs held-out problems but this run has none (task.n_test = 0): "
                             "start a run with task.n_test > 0, or set eval.every = 0")  # fmt: skip
        ids = sorted(text)
        if cfg.eval.prompts:  # the same subset at every evaluation, so the numbers compare
            ids = iteration_prompts(ids, cfg.eval.prompts, seed=cfg.run.seed, iteration=0, round=0)
        tok, got, _ = _policy_engine(run, i)
        sampling = Sampling(cfg.rollout.max_new_tokens, cfg.eval.temperature, 1.0)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="rlvr-eval-") as tmp:
            new = _generate(got.engine, tok, run, i, ids, text, Path(tmp), first_shard=0, samples=cfg.eval.samples,
                            sampling=sampling, seed_tag="eval/", label="evaluate")  # fmt: skip
            scored = verifier.score(new["shards"], problem_files, cfg.verify, max_new_tokens=cfg.rollout.max_new_tokens,
                                    hide=[paths.root])  # fmt: skip
            gen = pq.read_table(new["shards"]).sort_by([("prompt_id", "ascending"), ("sample_idx", "ascending")])
        key = ["prompt_id", "sample_idx"]
        rows = gen.select(["iteration", *key, "policy_version", "engine", "temperature", "response_text",
                           "num_response_tokens", "finish_reason"]).join(scored.select([*key, *EVAL_COLUMNS]), key)  # fmt: skip
        rows = rows.sort_by([("prompt_id", "ascending"), ("sample_idx", "ascending")])
        n = write_table(rows.select(EVALS.names), EVALS, tx.output(paths.table_dir("evals", i)) / shard_name(0))
        correct = rows["correct"].to_pylist()
        solved = {pid for pid, ok in zip(rows["prompt_id"].to_pylist(), correct, strict=True) if ok}
        stats = {"problems": len(ids), "samples": cfg.eval.samples, "temperature": cfg.eval.temperature,
                 "accuracy": sum(correct) / max(n, 1), f"pass_at_{cfg.eval.samples}": len(solved) / len(ids),
                 "reward_mean": pc.mean(rows["reward"]).as_py(), "engine": got.name,
                 "generation_seconds": round(time.perf_counter() - t0, 3)}  # fmt: skip
        rec = tx.commit(rows=n, extra=stats)
    log.info("evaluate %d: policy v%d on %d held-out problems x %d: accuracy %.3f, pass@%d %.3f", i, i, len(ids),
             cfg.eval.samples, stats["accuracy"], cfg.eval.samples, stats[f"pass_at_{cfg.eval.samples}"])  # fmt: skip
    return _result(rec, skipped=False)


# ---- update -------------------------------------------------------------------------------


def launch_update(spec: UpdateSpec, nproc: int) -> dict:
    """Run the update under torchrun with nproc processes; returns rank 0's stats."""
    with tempfile.TemporaryDirectory(prefix="rlvr-update-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(spec.model_dump_json())
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
               "-m", "rlvr.update_worker", str(spec_path)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"torchrun update with {nproc} processes failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(spec_path.with_suffix(".stats.json").read_text())


def update(run_dir: str | Path, iteration: int) -> StageResult:
    """One GRPO update of v_i on iteration i's scored rollouts -> policy v_{i+1} + updates/iteration=i/."""
    run = open_run(run_dir)
    cfg, paths, i = run.config, run.paths, iteration
    name = f"update({i})"
    rollouts = _upstream(run, ROLLOUT, i, name)
    scores = _upstream(run, VERIFY, i, name)
    policy = _policy_record(run, i, name)
    inputs = {"config": run.config_hash, "rollouts": rollouts.digest(), "scores": scores.digest(), "policy": policy.digest()}
    if rec := committed(paths, UPDATE, i, inputs):
        return _result(rec, skipped=True)

    with begin_stage(paths, UPDATE, i, inputs) as tx:
        t0 = time.perf_counter()
        spec = UpdateSpec(
            config=cfg.model_dump(mode="json"), iteration=i, seed=derive_seed(cfg.run.seed, i, "update", 0),
            policy_in=str(paths.policy_dir(i)), reference=str(paths.policy_dir(0)),
            rollout_files=[str(f) for f in rollouts.parquet_files(paths.root)],
            score_files=[str(f) for f in scores.parquet_files(paths.root)],
            policy_out=str(tx.output(paths.policy_dir(i + 1))),
            metrics_out=str(tx.output(paths.table_dir("updates", i)) / shard_name(0)),
        )  # fmt: skip
        stats = run_update(spec) if cfg.update.nproc == 1 else launch_update(spec, cfg.update.nproc)
        if stats["sequences"] == 0:
            log.warning("update %d: no group with reward variance; policy unchanged", i)
        rec = tx.commit(rows=stats["steps"], extra={"policy_version": i + 1, **stats})
    log.info("update %d: %d sequences, %d steps on %d process(es), loss %.4f, %.1fs -> policy v%d", i,
             stats["sequences"], stats["steps"], stats["world_size"], stats["loss"], time.perf_counter() - t0, i + 1)  # fmt: skip
    return _result(rec, skipped=False)
