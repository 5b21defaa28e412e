"""rollout(run, i): prompts drawn and rendered, G responses sampled, committed; and the generation
that evaluate(run, i) shares with it (rlvr.stages.evaluation: the engine, `_generate`).

Like every stage, rollout is idempotent: it computes its input fingerprint (config hash + the digests
of the upstream outputs it reads, rlvr.stages.lineage) and returns at once when a commit record
with that fingerprint exists. Otherwise it writes its outputs through rlvr.store.commit (temp
folder, rename, record last). Iteration i samples with policy v_max(0, i-k), k = rollout.max_staleness
(v_i when k = 0; rlvr.config.plan). Dynamic sampling (DAPO) draws
more prompts until enough groups have reward variance.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from transformers import AutoTokenizer
from transformers.utils import logging as hf_logging

from rlvr.config import Config
from rlvr.models.load import resolve_device
from rlvr.problems import prompts
from rlvr.progress import progress
from rlvr.rollout import engines
from rlvr.rollout.sampler import Request, Sampling
from rlvr.schema import (
    PREPARE,
    ROLLOUT,
    ROLLOUTS,
    rollout_row,
    shard_name,
)
from rlvr.seeds import derive_seed
from rlvr.stages.base import ContextLengthError, StageResult, _require_weights, _stage
from rlvr.stages.lineage import rollout_version, stage_inputs, upstream
from rlvr.stages.parts import merge_parts, part_prompts, stage_and_folder
from rlvr.store.commit import Outcome, StageTx, write_table
from rlvr.store.records import CommitRecord
from rlvr.store.run import Run, open_run
from rlvr.verify import scoring

log = logging.getLogger("rlvr")
hf_logging.disable_progress_bar()  # per-file "Loading weights" bars drown the stage logs


def iteration_prompts(
    prompt_ids: list[str], k: int, *, seed: int, iteration: int, round: int = 0, exclude: frozenset[str] = frozenset()
) -> list[str]:
    """k distinct prompt ids not in `exclude`, a deterministic function of (seed, iteration,
    round) and the id set. Round > 0 are dynamic-sampling top-ups."""
    pool = sorted(set(prompt_ids) - exclude)
    rng = np.random.default_rng([seed, iteration, round] if round else [seed, iteration])
    picks = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
    return [pool[j] for j in sorted(picks)]


def mixture_prompts(pools: dict[str, list[str]], weights: dict[str, float], k: int, *, seed: int, iteration: int) -> list[str]:
    """k prompt ids split between datasets in proportion to their weights (largest remainder; a
    dataset never gives more than it has), each dataset's share drawn like iteration_prompts."""
    names = [n for n in pools if pools[n]]
    total = sum(weights[n] for n in names)
    quota = {n: k * weights[n] / total for n in names}
    counts = {n: int(quota[n]) for n in names}
    for n in sorted(names, key=lambda n: counts[n] - quota[n])[: k - sum(counts.values())]:
        counts[n] += 1
    out = []
    for d, n in enumerate(names):  # each dataset its own stream: adding one leaves the others' picks alone
        pool = sorted(pools[n])
        picks = np.random.default_rng([seed, iteration, 0, d + 1]).choice(
            len(pool), size=min(counts[n], len(pool)), replace=False
        )
        out += [pool[j] for j in sorted(picks)]
    return out


# ---- generation: rollout, and evaluate (rlvr.stages.evaluation) ------------------------------


def _generation_inputs(run: Run, stage: str, i: int) -> tuple[CommitRecord, dict]:
    """prepare's record and the fingerprint of a stage that generates with policy v_i from the problems."""
    return upstream(run, PREPARE, None, f"{stage}({i})"), stage_inputs(run, stage, i)


def _problem_rows(run: Run, problems: CommitRecord) -> list[dict]:
    return pq.read_table(problems.parquet_files(run.paths.root)).to_pylist()


def _prompt_ids(run: Run, problems: CommitRecord, i: int, split: str) -> dict[str, list[int]]:
    """prompt_id -> the token ids policy v_i gets for each problem of one split ('train' | 'test'):
    rlvr.problems.prompts.prompt_ids with v_i's tokenizer, the one path every consumer shares."""
    tok = AutoTokenizer.from_pretrained(run.paths.policy_dir(i))
    return prompts.prompt_ids(tok, _problem_rows(run, problems), run.config.prompt, split)


def _first_prompts(run: Run, problems: CommitRecord, ids: list[str], i: int) -> list[str]:
    """The iteration's prompts: a uniform draw from the train pool, or with task.datasets weights
    a draw split between the datasets in proportion."""
    cfg, k = run.config, run.config.rollout.prompts_per_iteration
    sources = cfg.task.sources()
    if all(d.weight is None for d in sources):
        return iteration_prompts(ids, k, seed=cfg.run.seed, iteration=i)
    of = {r["prompt_id"]: r.get("dataset") for r in _problem_rows(run, problems)}
    pools = {d.label: [p for p in ids if of[p] == d.label] for d in sources}
    return mixture_prompts(pools, {d.label: d.weight or 1.0 for d in sources}, k, seed=cfg.run.seed, iteration=i)


def _policy_engine(cfg: Config, policy_dir: Path) -> tuple[AutoTokenizer, engines.Acquired, torch.device]:
    """A policy folder's tokenizer and a generation engine holding it (from the pool: warm when it
    can be), with the config's [rollout] engine on rollout.device (default: update.device); rollout(i) and evaluate(i)
    pass policy v_i's folder, `rlvr eval` any version's or model's."""
    device = resolve_device(cfg.rollout.device or cfg.update.device)
    lora_rank = cfg.update.lora.r if cfg.update.lora_on else 0  # a LoRA run: vLLM serves v0 with LoRA on too
    got = engines.acquire(
        cfg.rollout, policy_dir, device=device, seed=cfg.run.seed, max_model_len=_max_model_len(policy_dir), lora_rank=lora_rank
    )
    return AutoTokenizer.from_pretrained(policy_dir), got, device


def rollout(run_dir: str | Path, iteration: int, part: int | None = None) -> StageResult:
    """G responses per sampled prompt with policy v_b -> rollouts/iteration=i/, b = max(0, i - k) for
    rollout.max_staleness = k (rlvr.config.plan; k = 0: v_i). With rollout.shards = K > 1: `part` p
    samples its share of the prompts into its own folder and commits as stage rollout.part-{p+1}-of-K,
    and rollout(i) without a part commits the stage from its committed parts (rlvr.stages.parts)."""
    run = open_run(run_dir)
    i, parts = iteration, run.config.rollout.shards
    if part is None and parts > 1:
        return merge_parts(run, ROLLOUT, i)
    stage, out = stage_and_folder(run, ROLLOUT, i, part)
    problems, inputs = _generation_inputs(run, stage, i)
    v = rollout_version(run, i)

    def body(tx: StageTx) -> Outcome:
        _require_weights(run, v, f"rollout({i})")
        text = _prompt_ids(run, problems, v, "train")
        tok, got, device = _policy_engine(run.config, run.paths.policy_dir(v))
        log.info(
            "rollout %d: policy v%d, %s engine (%s), start %.1fs, weight load %.2fs",
            i,
            v,
            got.name,
            "warm" if got.warm else "cold",
            got.start_seconds,
            got.weight_load_seconds,
        )
        sampler = _RoundSampler(run, i, v, problems, text, got.engine, tok, tx.output(out))
        chosen = _first_prompts(run, problems, list(text), i)
        if part is not None:
            chosen = part_prompts(chosen, part, parts)
        t0 = time.perf_counter()
        rounds, used = _sample_rounds(sampler, chosen)
        done = _rollout_outcome(run, i, got, device, rounds, prompts=len(used), secs=time.perf_counter() - t0)
        plan = {"policy_version": v, "staleness": i - v, "max_staleness": run.config.rollout.max_staleness}
        return Outcome(done.rows, plan | done.extra)

    return _stage(run, stage, i, inputs, body)


@dataclass(frozen=True)
class _RoundSampler:
    """What every round of one rollout stage samples with: policy v_version's engine and tokenizer
    (the plan's behaviour policy), the train prompts' token ids (`text`), and the stage's output folder."""

    run: Run
    i: int
    version: int
    problems: CommitRecord
    text: dict[str, list[int]]
    engine: engines.Engine
    tok: Any
    out: Path

    def sample(self, prompt_ids: list[str], *, first_shard: int, counted: int) -> dict:
        return _generate(
            self.engine,
            self.tok,
            self.run.config,
            self.i,
            prompt_ids,
            self.text,
            self.out,
            policy_dir=self.run.paths.policy_dir(self.version),
            first_shard=first_shard,
            counted=counted,
            policy_version=self.version,
        )

    def signal_groups(self, shards: list[Path]) -> int:
        """Groups of these shards whose rewards are not all equal (scored as the verify stage will)."""
        cfg, root = self.run.config, self.run.paths.root
        scored = scoring.score(
            shards, self.problems.parquet_files(root), cfg.verify, max_new_tokens=cfg.rollout.max_new_tokens, hide=[root]
        )
        return len(set(pc.filter(scored["prompt_id"], pc.greater(scored["group_std"], 0)).to_pylist()))


def _sample_rounds(sampler: _RoundSampler, chosen: list[str]) -> tuple[list[dict], set[str]]:
    """Round 0 samples `chosen`; with rollout.dynamic_sampling_rounds > 0, DAPO dynamic sampling (Yu
    et al. 2025, sec. 3.2): groups whose rewards are all equal carry no signal, so each further round
    samples fresh prompts, as many as groups are missing, until `target` groups have some or the
    rounds run out. Returns each round's counts and every prompt sampled."""
    cfg = sampler.run.config.rollout
    target = cfg.min_signal_groups or cfg.prompts_per_iteration
    used: set[str] = set()
    rounds: list[dict] = []
    shards = 0
    for rnd in range(1 + cfg.dynamic_sampling_rounds):
        counted = sum(r["rows"] for r in rounds)  # the progress bar counts every round's responses
        new = sampler.sample(chosen, first_shard=shards, counted=counted)
        shards += len(new["shards"])
        used |= set(chosen)
        rounds.append({"round": rnd, "prompts": len(chosen), "rows": new["rows"], "tokens": new["tokens"]})
        if cfg.dynamic_sampling_rounds == 0:
            break
        rounds[-1]["signal_groups"] = sampler.signal_groups(new["shards"])
        chosen = _refill(sampler, rounds, used, target)
        if not chosen:
            break
    return rounds, used


def refill_size(signal: list[int], *, target: int, rounds: int) -> int:
    """Fresh prompts dynamic sampling asks for after the rounds so far (`signal`: each one's groups
    with signal), out of `rounds` extra rounds: the groups still missing, 0 once `target` is met or
    the last extra round is done."""
    have = sum(signal)
    return 0 if have >= target or len(signal) > rounds else target - have


def _refill(sampler: _RoundSampler, rounds: list[dict], used: set[str], target: int) -> list[str]:
    """The next round's prompts (none left unused, or refill_size 0: []), drawn like iteration_prompts."""
    cfg, i = sampler.run.config, sampler.i
    rnd, have = rounds[-1]["round"], sum(r["signal_groups"] for r in rounds)
    need = refill_size([r["signal_groups"] for r in rounds], target=target, rounds=cfg.rollout.dynamic_sampling_rounds)
    if need == 0:
        if have < target:
            log.info("rollout %d: %d/%d groups with signal after the last round (%d)", i, have, target, rnd)
        return []
    chosen = iteration_prompts(list(sampler.text), need, seed=cfg.run.seed, iteration=i, round=rnd + 1, exclude=frozenset(used))
    if not chosen:
        log.warning("rollout %d: dynamic sampling ran out of unused prompts", i)
        return []
    log.info("rollout %d: %d/%d groups with signal after round %d; sampling %d more prompts", i, have, target, rnd, len(chosen))
    return chosen


def _rollout_outcome(
    run: Run, i: int, got: engines.Acquired, device: torch.device, rounds: list[dict], *, prompts: int, secs: float
) -> Outcome:
    """The rollout's commit: its rows and the record's extra (engine, timings, tokens, each round)."""
    n_rows, tokens = sum(r["rows"] for r in rounds), sum(r["tokens"] for r in rounds)
    log.info(
        "rollout %d: %d responses (%d prompts x G=%d, %d round(s)), %d tokens in %.1fs",
        i,
        n_rows,
        prompts,
        run.config.rollout.group_size,
        len(rounds),
        tokens,
        secs,
    )
    return Outcome(
        n_rows,
        {
            "engine": got.name,
            "warm": got.warm,
            "device": str(device),
            "engine_start_seconds": round(got.start_seconds, 3),
            "weight_load_seconds": round(got.weight_load_seconds, 3),
            "generation_seconds": round(secs, 3),
            "tokens": tokens,
            "rounds": rounds,
            "tokens_per_s": round(tokens / max(secs, 1e-9), 1),
        },
    )


def _max_model_len(policy_dir: Path) -> int:
    """Context the vLLM engine reserves: the model's own limit (prompts here are short)."""
    conf = json.loads((policy_dir / "config.json").read_text())
    return int(min(conf.get("max_position_embeddings", 2048), 4096))


def _check_context(requests: list[Request], sampling: Sampling, context: int) -> None:
    """ContextLengthError, naming the prompt, when the longest prompt and max_new_tokens exceed the context."""
    longest = max(requests, key=lambda r: len(r.prompt_token_ids), default=None)
    if longest is not None and len(longest.prompt_token_ids) + sampling.max_new_tokens > context:
        fix = "lower rollout.max_new_tokens, or use" if len(longest.prompt_token_ids) < context else "use"
        raise ContextLengthError(
            f"prompt {longest.prompt_id!r} has {len(longest.prompt_token_ids)} tokens; with rollout.max_new_tokens = "
            f"{sampling.max_new_tokens} that exceeds the model's context of {context} tokens: {fix} a model with a "
            "longer context (model.path)"
        )


def _generate(
    engine: engines.Engine,
    tok,
    cfg: Config,
    i: int,
    prompt_ids: list[str],
    text: dict[str, list[int]],
    out: Path,
    *,
    policy_dir: Path,
    first_shard: int,
    samples: int = 0,
    sampling: Sampling | None = None,
    seed_tag: str = "",
    label: str = "rollout",
    counted: int = 0,
    policy_version: int | None = None,
) -> dict:
    """`samples` (default rollout.group_size) responses per prompt id (`text`: its token ids) by the engine holding
    `policy_dir` (its context bounds lengths), seeded as iteration i, as shards part-{first_shard + k}; returns counts.
    `seed_tag` keeps eval seeds apart from training's; `counted`: earlier rounds' responses, in the progress counts;
    `policy_version`: the version `policy_dir` holds, when not v_i (rollout.max_staleness)."""
    G = samples or cfg.rollout.group_size
    requests = [
        Request(pid, s, text[pid], derive_seed(cfg.run.seed, i, seed_tag + pid, s)) for pid in prompt_ids for s in range(G)
    ]
    sampling = sampling or Sampling(cfg.rollout.max_new_tokens, cfg.rollout.temperature, cfg.rollout.top_p)
    _check_context(requests, sampling, _max_model_len(policy_dir))
    n_rows, tokens, shards, t0 = 0, 0, [], time.perf_counter()
    progress(label, i, done=counted, total=counted + len(requests), unit="responses")
    for k, batch in enumerate(engine.generate(requests, sampling)):  # one shard per batch: memory stays bounded
        rows = [
            rollout_row(
                iteration=i,
                prompt_id=req.prompt_id,
                sample_idx=req.sample_idx,
                prompt_token_ids=req.prompt_token_ids,
                response_token_ids=smp.token_ids,
                response_logprobs=smp.logprobs,
                response_text=tok.decode(smp.token_ids, skip_special_tokens=True),
                finish_reason=smp.finish_reason,
                engine=engine.name,
                temperature=sampling.temperature,
                seed=req.seed,
                policy_version=policy_version,
            )
            for req, smp in batch
        ]
        tokens += sum(len(s.token_ids) for _, s in batch)
        shards.append(out / shard_name(first_shard + k))
        n_rows += write_table(rows, ROLLOUTS, shards[-1])
        progress(label, i, done=counted + n_rows, total=counted + len(requests), unit="responses")
        log.info(
            "%s %d: %d/%d responses, %.0f tok/s", label, i, n_rows, len(requests), tokens / max(time.perf_counter() - t0, 1e-9)
        )
    return {"rows": n_rows, "tokens": tokens, "shards": shards}
