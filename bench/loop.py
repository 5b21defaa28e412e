"""Benchmark: the real-model loop's speed, each part as a fraction of this CPU's FLOP ceiling, against TRL.

    python bench/loop.py                  # SmolLM2-135M-Instruct, the arithmetic recipe's batch (16 x 8, 48 tokens); ~15 min idle
    python bench/loop.py --iterations 2 --trl-batches 2 --no-trl-gc    # quicker
    python bench/loop.py --smoke          # tiny scale, proves it runs; measures nothing

Converts SmolLM2 once if `rlvr models prepare smollm2-135m-instruct` has not; needs the bench extra
(`pip install -e ".[bench]"`: trl) and uses vLLM when `make vllm` was run (else transformers; the
figures name the engine). No network. Real weights, real prompts, real answers: the batch of
recipes/smollm2-arithmetic.toml (prompts_per_iteration x group_size samples, its max_new_tokens and
temperature), dynamic sampling off so that both sides handle exactly that many samples.

What is measured, all in one run:
- ceiling: the best fp32 matrix-multiply rate torch reaches on this CPU with its threads, at the
  model's own shapes (rows x 576 @ 576 x 1536, 576 x 576, 576 x vocab) and a square 2048 one;
  measured at the start and at the end (`ceiling_*_gflop_per_s`), the higher one is the ceiling.
- rlvr: --iterations iterations of the loop, driven stage by stage (rlvr.stages.generation.rollout, verify,
  update: the functions the Prefect tasks call). Iteration 0 carries the vLLM cold start; the
  figures are medians over the later (warm) ones.
    rollout_tokens_per_s = generated tokens / the rollout's generation seconds;
    rollout fraction = 2 (B (prompt tokens once per prompt + generated) + H generated) / seconds / ceiling;
    update fraction = 6 (B (prompt + response tokens trained) + H response tokens trained) /
      optimiser-step seconds / ceiling; the update stage's wall time (its process start, loading,
      saving the weights and optimiser state) is reported beside it.
  B = the parameters every token passes through (all but the embedding and the output head),
  H = the output head's (vocab x hidden; both sides run it on response positions only). The
  useful work only: recomputation (checkpointed head chunks, TRL's gradient checkpointing, TRL's
  old-logprob forward) and padding count as time, not as FLOPs. Attention's own FLOPs (~2% at
  these lengths) are left out of the numerator on both sides.
- TRL: GRPOTrainer on the same model and batch settings (bench/learning.py's mapping), generation
  with transformers on CPU (its vLLM path needs CUDA), rewards from rlvr's verifier; timed per
  generation batch (= one rlvr iteration: generation, reward, `update.minibatches` optimiser
  steps). Its generation (`_generate_and_score_completions`) is timed apart, so its update time is
  the rest. With gradient checkpointing off (its fastest) and on (its default, --no-trl-gc skips).
  TRL's first generation batch is a warm-up; the figures are medians over the later ones.
- rlvr-cold: the same rlvr run again with update.warm = false (each update loads v_i and its AdamW
  state from the files; warm, the trainer held from the previous update is used). Same bytes. The
  two runs alternate, iteration i of one then of the other, so that drifting load hits both.
- ratios: TRL's generation-batch seconds / rlvr's iteration seconds (`iteration_speedup_*`, and
  `cold_trainer_iteration_speedup_*` for the cold side), the update's trained tokens per second,
  rlvr's over TRL's (`update_speedup_*`), and cold over warm (`warm_trainer_*_ratio`).

Prints `key: value` lines and writes bench/results/loop.json (--smoke: loop-smoke.json).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers.utils import logging as hf_logging

sys.path.insert(0, str(Path(__file__).parent))
import learning  # bench/learning.py: the recipe -> TRL mapping, the shared reward
from machine import machine_info, write_result  # bench/machine.py

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import apply_overrides, load_config, parse_config
from rlvr.models.tiny import base_model
from rlvr.rollout import engines
from rlvr.schema import ROLLOUT, UPDATE
from rlvr.store.records import verified_record
from rlvr.views.sql import run_sql

RESULTS = Path(__file__).parent / "results"
SMOKE = ["--iterations", "2", "--trl-batches", "2", "--set", "rollout.prompts_per_iteration=2", "--set", "rollout.group_size=4"]
SMOKE += ["--set", "rollout.max_new_tokens=8"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=learning.RECIPE, help="the config whose batch both sides run")
    ap.add_argument("--iterations", type=int, default=3, help="rlvr iterations (the first is the cold one)")
    ap.add_argument("--trl-batches", type=int, default=3, help="TRL generation batches per setting (the first is a warm-up)")
    ap.add_argument("--no-trl-gc", action="store_true", help="skip TRL with gradient checkpointing (its default)")
    ap.add_argument(
        "--sides",
        default="rlvr,rlvr-cold,trl",
        help="comma-separated: rlvr (update.warm = true), rlvr-cold (the same run with update.warm = false), trl",
    )
    ap.add_argument("--set", dest="sets", action="append", default=[], help="override a recipe field")
    ap.add_argument("--smoke", action="store_true", help="tiny scale: " + " ".join(SMOKE))
    ap.add_argument("--out", type=Path, help="results file (default bench/results/loop.json, or loop-smoke.json)")
    ap.add_argument(
        "--keep", type=Path, help="write the runs under this folder and keep them (default: a temporary one, removed)"
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args = ap.parse_args([*SMOKE, *(argv if argv is not None else sys.argv[1:])])
    return args


# ---- the ceiling ------------------------------------------------------------------------------


def gemm_gflop_per_s(m: int, k: int, n: int, seconds: float = 1.5) -> float:
    """Sustained fp32 a @ b rate of torch on this CPU at one shape (best of repeated timings)."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b  # warm-up: allocation, thread pool
    best, end = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * m * k * n / best / 1e9


def ceiling(hidden: int, inter: int, vocab: int) -> dict[str, float]:
    shapes = {
        "mlp": (2048, hidden, inter),
        "attn": (2048, hidden, hidden),
        "head": (512, hidden, vocab),
        "square": (2048, 2048, 2048),
    }
    return {name: round(gemm_gflop_per_s(*s), 1) for name, s in shapes.items()}


@dataclass(frozen=True)
class ModelFlops:
    """A causal LM's matmul work per token: `body` weight-matrix entries for every token it reads
    (all matrices but the embedding table, a lookup, and the head), `head` (the output
    projection) for every token it predicts."""

    body: int
    head: int

    @classmethod
    def of(cls, model) -> ModelFlops:
        emb, out = model.get_input_embeddings().weight, model.get_output_embeddings().weight
        mats = sum(p.numel() for p in model.parameters() if p.dim() >= 2)  # norms and biases are not matmuls; tied listed once
        return cls(body=mats - emb.numel() - (0 if out is emb else out.numel()), head=out.numel())

    def forward(self, read: int, predicted: int) -> float:
        """FLOPs of a forward pass reading `read` tokens and predicting `predicted` of them."""
        return 2.0 * (self.body * read + self.head * predicted)

    def train(self, read: int, predicted: int) -> float:
        """Forward + backward (2x the forward)."""
        return 3.0 * self.forward(read, predicted)


# ---- rlvr ---------------------------------------------------------------------------------------


def run_rlvr(cfg, folder: Path, flops: ModelFlops, iterations: int) -> list[dict]:
    return run_rlvr_sides({"rlvr": cfg}, folder, flops, iterations)["rlvr"]


def run_rlvr_sides(cfgs: dict, folder: Path, flops: ModelFlops, iterations: int) -> dict[str, list[dict]]:
    """One run per config, iteration i of each in turn (this machine's load drifts over minutes:
    alternating keeps the sides' iterations side by side in time)."""
    runs = {name: create_or_open(folder / name / "rlvr-run", cfg, iterations) for name, cfg in cfgs.items()}
    for run in runs.values():
        stages.prepare(str(run.paths.root))
    out: dict[str, list[dict]] = {name: [] for name in runs}
    for i in range(iterations):
        for name, run in runs.items():
            out[name].append(_rlvr_iteration(run, i, flops, name))
    engines.close_all()  # the vLLM worker holds GiBs of KV cache: free them before TRL starts
    return out


def _rlvr_iteration(run, i: int, flops: ModelFlops, side: str) -> dict:
    """rollout(i), verify(i), update(i) of one run, timed, and the figures of the iteration."""
    d = str(run.paths.root)
    t = {}
    for name, stage in (("rollout", stages.rollout), ("verify", stages.verify), ("update", stages.update)):
        t0 = time.perf_counter()
        stage(d, i)
        t[name] = time.perf_counter() - t0
    roll = verified_record(run.paths, ROLLOUT, i).extra
    upd = verified_record(run.paths, UPDATE, i).extra
    prompt_tokens = run_sql(
        d, f"SELECT sum(len(prompt_token_ids))::BIGINT AS n FROM rollouts WHERE iteration = {i} AND sample_idx = 0"
    ).to_pylist()[0]["n"]
    trained = run_sql(
        d,
        "SELECT count(*) AS seqs, coalesce(sum(len(r.prompt_token_ids) + r.num_response_tokens), 0)::BIGINT AS tokens, "
        "coalesce(sum(r.num_response_tokens), 0)::BIGINT AS response_tokens "
        "FROM rollouts r JOIN scores s USING (iteration, prompt_id, sample_idx) "
        f"WHERE r.iteration = {i} AND s.group_std > 0",
    ).to_pylist()[0]
    step_rows = run_sql(d, f"SELECT seconds FROM updates WHERE iteration = {i} ORDER BY step").to_pylist()
    gen_s, step_s = roll["generation_seconds"], sum(r["seconds"] or 0.0 for r in step_rows)
    row = {
        "iteration": i,
        "engine": roll["engine"],
        "warm": roll["warm"],
        "rollout_s": round(t["rollout"], 2),
        "generation_s": gen_s,
        "generated_tokens": roll["tokens"],
        "samples": run_sql(d, f"SELECT count(*) AS n FROM rollouts WHERE iteration = {i}").to_pylist()[0]["n"],
        "rollout_tokens_per_s": round(roll["tokens"] / gen_s, 1),
        "rollout_gflop_per_s": round(flops.forward(prompt_tokens + roll["tokens"], roll["tokens"]) / gen_s / 1e9, 2),
        "verify_s": round(t["verify"], 2),
        "update_stage_s": round(t["update"], 2),
        "update_steps_s": round(step_s, 2),
        "update_overhead_s": round(t["update"] - step_s, 2),  # loading, saving, hashing: what a warm trainer cuts
        "update_step_s": [round(r["seconds"] or 0.0, 2) for r in step_rows],  # the first runs cold (fresh process memory)
        "trained_sequences": trained["seqs"],
        "trained_tokens": trained["tokens"],
        "trained_response_tokens": trained["response_tokens"],
        "update_tokens_per_s": round(trained["tokens"] / step_s, 1) if step_s else None,
        "update_gflop_per_s": round(flops.train(trained["tokens"], trained["response_tokens"]) / step_s / 1e9, 2)
        if step_s
        else None,
        "iteration_s": round(sum(t.values()), 2),
        "update_extra": {k: upd.get(k) for k in ("groups_used", "groups_dropped") if k in upd},
    }
    print(
        f"# {side} iteration {i} ({row['engine']}, {'warm' if row['warm'] else 'cold'}): {row['iteration_s']:.1f}s "
        f"(rollout {row['rollout_s']:.1f}s at {row['rollout_tokens_per_s']} tok/s, verify {row['verify_s']:.1f}s, "
        f"update {row['update_stage_s']:.1f}s of which steps {row['update_steps_s']:.1f}s on {trained['tokens']} tokens)",
        file=sys.stderr,
        flush=True,
    )
    return row


# ---- TRL ----------------------------------------------------------------------------------------


def run_trl(cfg, folder: Path, flops: ModelFlops, batches: int, gc: bool, seed: int = 0) -> list[dict]:
    from transformers import TrainerCallback

    from rlvr.problems.datasets import load_problems

    u = cfg.update
    rows: list[dict] = []
    cur: dict = {}

    class Clock(TrainerCallback):
        def on_step_begin(self, a, s, c, **kw):
            if s.global_step % u.minibatches == 0:
                cur.update(t0=time.perf_counter(), gen_s=0.0, tokens=0, gen_tokens=0)

        def on_step_end(self, a, s, c, **kw):
            if s.global_step % u.minibatches == 0:
                wall = time.perf_counter() - cur["t0"]
                upd = wall - cur["gen_s"]
                rows.append(
                    {
                        "batch": s.global_step // u.minibatches - 1,
                        "batch_s": round(wall, 2),
                        "generation_s": round(cur["gen_s"], 2),
                        "generated_tokens": cur["gen_tokens"],
                        "rollout_tokens_per_s": round(cur["gen_tokens"] / cur["gen_s"], 1),
                        "update_s": round(upd, 2),
                        "trained_tokens": cur["tokens"],
                        "update_tokens_per_s": round(cur["tokens"] / upd, 1),
                        "update_gflop_per_s": round(flops.train(cur["tokens"], cur["gen_tokens"]) / upd / 1e9, 2),
                    }
                )
                r = rows[-1]
                print(
                    f"# trl (gc {'on' if gc else 'off'}) batch {r['batch']}: {r['batch_s']:.1f}s (generation {r['generation_s']:.1f}s "
                    f"at {r['rollout_tokens_per_s']} tok/s, update {r['update_s']:.1f}s on {r['trained_tokens']} tokens)",
                    file=sys.stderr,
                    flush=True,
                )

    # the problems as prepare writes them (templated): TRL gets the turns rlvr's rollout renders (bench/learning.py)
    problems = load_problems(cfg.task, cfg.prompt)
    trainer = learning.trl_trainer(cfg, problems, folder, seed, batches, gc=gc, callbacks=[Clock()])
    generate = trainer._generate_and_score_completions

    def timed(inputs):  # TRL's own generation + scoring, timed (the loss, backward and step are the rest)
        t = time.perf_counter()
        out = generate(inputs)
        cur["gen_s"] += time.perf_counter() - t
        mask, pmask = out["completion_mask"], out["prompt_mask"]
        cur["gen_tokens"] += int(mask.sum())
        cur["tokens"] += int(mask.sum() + pmask.sum())  # every sequence is trained on, prompt + completion
        return out

    trainer._generate_and_score_completions = timed
    trainer.train()
    return rows


# ---- figures ------------------------------------------------------------------------------------


def median(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 3) if vals else None


def main() -> None:
    args = parse_args()
    hf_logging.disable_progress_bar()
    sides = [s for s in args.sides.split(",") if s]
    cfg = load_config(args.recipe)
    data = apply_overrides(
        cfg.model_dump(mode="json", exclude_none=True),
        ["rollout.dynamic_sampling_rounds=0", "eval.every=0", "checkpoint.keep_last=1", *args.sets],
    )
    cfg = parse_config(data, f"{args.recipe} + --set")
    from rlvr.models import registry as models

    if cfg.model.name and not models.is_prepared(cfg.model.name):
        models.prepare(cfg.model.name)
    from transformers import AutoConfig, AutoModelForCausalLM

    base = base_model(cfg)
    mc = AutoConfig.from_pretrained(base)
    flops = ModelFlops.of(AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32))
    out_path = args.out or RESULTS / ("loop-smoke.json" if args.smoke else "loop.json")
    print(
        f"# model {base.name}: {flops.body / 1e6:.1f}M body + {flops.head / 1e6:.1f}M head parameters; torch threads {torch.get_num_threads()}",
        file=sys.stderr,
    )
    ceil_start = ceiling(mc.hidden_size, mc.intermediate_size, mc.vocab_size)
    print(f"# ceiling at start (GFLOP/s): {ceil_start}", file=sys.stderr, flush=True)
    work = args.keep or Path(tempfile.mkdtemp(prefix="rlvr-bench-loop-"))
    res: dict = {}
    try:
        cfgs = {}
        if "rlvr" in sides:
            cfgs["rlvr"] = cfg.model_copy(update={"update": cfg.update.model_copy(update={"warm": True})})
        if "rlvr-cold" in sides:
            cfgs["rlvr_cold"] = cfg.model_copy(update={"update": cfg.update.model_copy(update={"warm": False})})
        if cfgs:
            res |= run_rlvr_sides(cfgs, work, flops, args.iterations)
        if "trl" in sides:
            for gc in (False,) if args.no_trl_gc else (False, True):
                res[f"trl_gc_{'on' if gc else 'off'}"] = run_trl(cfg, work / f"trl-{gc}", flops, args.trl_batches, gc)
    finally:
        engines.close_all()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    ceil_end = ceiling(mc.hidden_size, mc.intermediate_size, mc.vocab_size)
    print(f"# ceiling at end (GFLOP/s): {ceil_end}", file=sys.stderr, flush=True)
    peak = max([*ceil_start.values(), *ceil_end.values()])
    f: dict = {"ceiling_gflop_per_s": peak, "ceiling_start_gflop_per_s": ceil_start, "ceiling_end_gflop_per_s": ceil_end}
    if "rlvr" in res:
        warm = res["rlvr"][1:] or res["rlvr"]
        f["rlvr_engine"] = warm[0]["engine"]
        for k in ("iteration_s", "rollout_s", "generation_s", "rollout_tokens_per_s", "verify_s", "update_stage_s"):
            f[f"rlvr_{k}"] = median(warm, k)
        for k in ("update_steps_s", "update_overhead_s", "update_tokens_per_s", "trained_tokens", "generated_tokens"):
            f[f"rlvr_{k}"] = median(warm, k)
        f["rlvr_rollout_ceiling_fraction"] = round(median(warm, "rollout_gflop_per_s") / peak, 4)
        if median(warm, "update_gflop_per_s"):
            f["rlvr_update_ceiling_fraction"] = round(median(warm, "update_gflop_per_s") / peak, 4)
        f["rlvr_cold_iteration_s"] = res["rlvr"][0]["iteration_s"]
    if "rlvr_cold" in res:  # the same run with update.warm = false: what the warm trainer saves, per iteration
        warm = res["rlvr_cold"][1:] or res["rlvr_cold"]
        for k in ("iteration_s", "rollout_s", "verify_s", "update_stage_s", "update_steps_s", "update_overhead_s"):
            f[f"rlvr_cold_trainer_{k}"] = median(warm, k)
        if "rlvr" in res:
            f["warm_trainer_iteration_ratio"] = round(f["rlvr_cold_trainer_iteration_s"] / f["rlvr_iteration_s"], 3)
            f["warm_trainer_update_stage_ratio"] = round(f["rlvr_cold_trainer_update_stage_s"] / f["rlvr_update_stage_s"], 3)
    for side in ("trl_gc_off", "trl_gc_on"):
        if side not in res:
            continue
        warm = res[side][1:] or res[side]
        for k in ("batch_s", "generation_s", "rollout_tokens_per_s", "update_s", "update_tokens_per_s", "trained_tokens"):
            f[f"{side}_{k}"] = median(warm, k)
        f[f"{side}_update_ceiling_fraction"] = round(median(warm, "update_gflop_per_s") / peak, 4)
        if "rlvr_cold" in res:
            f[f"cold_trainer_iteration_speedup_vs_{side}"] = round(f[f"{side}_batch_s"] / f["rlvr_cold_trainer_iteration_s"], 3)
        if "rlvr" in res:
            f[f"iteration_speedup_vs_{side}"] = round(f[f"{side}_batch_s"] / f["rlvr_iteration_s"], 3)
            if f.get("rlvr_update_tokens_per_s"):
                f[f"update_speedup_vs_{side}"] = round(f["rlvr_update_tokens_per_s"] / f[f"{side}_update_tokens_per_s"], 3)
    write_result(
        out_path,
        f,
        smoke=args.smoke,
        note="SMOKE RUN: tiny scale, proves it runs; the figures measure nothing"
        if args.smoke
        else "medians over warm iterations",
        per_iteration=res,
        machine=machine_info(torch_threads=torch.get_num_threads()),
        versions={p: learning._version(p) for p in ("torch", "transformers", "trl", "vllm", "rlvr")},
        settings={
            "flops_body_params": flops.body,
            "flops_head_params": flops.head,
            "config": cfg.model_dump(mode="json", exclude_none=True),
        },
    )


if __name__ == "__main__":
    main()
