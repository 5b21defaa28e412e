"""Benchmark: does a real model learn, with rlvr and with TRL's GRPOTrainer, and how fast?

    python bench/learning.py                       # full: 3 seeds x (rlvr, TRL), up to 30 min of training each (~4 h+)
    python bench/learning.py --seeds 1 --minutes 10
    python bench/learning.py --smoke               # a few minutes: proves both sides run end to end, measures nothing
    python bench/learning.py --first-seed 1 --seeds 1 --out s1.json   # a seed at a time (one session each) ...
    python bench/learning.py --combine s0.json s1.json s2.json --out bench/results/learning.json  # ... merged

Converts SmolLM2 once if `rlvr models prepare smollm2-135m-instruct` has not, and needs the bench extra (`pip install -e ".[bench]"`: trl).
No network. SmolLM2-135M-Instruct on arithmetic products (a * b, operands 0..30; base greedy
accuracy 0.30-0.36), with the settings of the shipped recipe recipes/smollm2-arithmetic.toml on
both sides (nothing is picked here): the same model, training prompts, G, prompts per step, max
new tokens, temperature, learning rate and schedule, clip epsilons, loss aggregation (token mean =
TRL's "dapo"), optimiser steps per generation batch, AdamW betas, grad-norm clip, no KL.

- rlvr: a run folder driven stage by stage in this process (rlvr.stages.generation: rollout, verify, update;
  the same functions the Prefect tasks call, without the flow's per-task overhead), rollouts
  with `rollout.engine` (auto: vLLM when `make vllm` was run, else transformers). Old policy
  versions are pruned as the run goes (checkpoint.keep_last = 1; 538 MB of weights each).
- TRL: GRPOTrainer on CPU (use_cpu, no vLLM: what TRL offers on such a machine), gradient
  checkpointing off (its fastest setting; --trl-gc for its default), rewards from rlvr's own
  verifier (the same DuckDB scoring and reward weights), prompts in the chat format it templates.
  TRL draws its prompts with its own sampler: the same pool, not the same order.

Both sides train on the prompts rollout renders (rlvr.problems.prompts: the task's template, [prompt]
system and few-shot turns, the model's chat template) and are evaluated by one code path, rlvr's
own evaluate stage: rlvr's side is its run's evals (evaluate(i) on v_i); TRL's policy is saved and
evaluated as policy v0 of a throwaway run with the same config. Greedy, the same held-out problems
(eval.prompts of them, --eval-prompts), the run's engine and verifier, every --eval-every
iterations (an iteration = one generation batch = `update.minibatches` optimiser steps on both
sides) and at the end. (Until 2026-12-01 the bench evaluated both sides, and trained TRL's, on the
bare problem text without the task's instruction: see docs/learning.md.) Training
time excludes evaluation and model loading on both sides. A side stops after the iteration in
which its training time passed --minutes, or after --iterations.

Figures per seed and side: held-out accuracy at each evaluation (with its training time), best,
gain over the base, the lowest evaluation's margin to the base, and the training time each side
took to reach the other's best accuracy (`..._to_reach_..._s`, null when it never did), and
their ratio. Prints `key: value` lines; writes bench/results/learning.json (--smoke:
bench/results/learning-smoke.json, labelled smoke) with machine, versions and settings.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch
from machine import write_result  # bench/machine.py
from transformers.utils import logging as hf_logging

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config, apply_overrides, load_config, parse_config
from rlvr.models.tiny import base_model
from rlvr.problems import prompts
from rlvr.problems.datasets import load_problems
from rlvr.rollout import engines
from rlvr.schema import PROBLEMS, ROLLOUTS
from rlvr.store.commit import write_table
from rlvr.verify.scoring import score
from rlvr.views.sql import run_sql

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "recipes" / "smollm2-arithmetic.toml"
RESULTS = Path(__file__).parent / "results"
SMOKE = [
    "--seeds",
    "1",
    "--iterations",
    "2",
    "--eval-every",
    "1",
    "--eval-prompts",
    "8",
    "--set",
    "rollout.prompts_per_iteration=2",
    "--set",
    "rollout.group_size=4",
    "--set",
    "rollout.max_new_tokens=16",
    "--set",
    "rollout.dynamic_sampling_rounds=0",
]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=RECIPE, help="the rlvr config both sides take their settings from")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (run.seed and TRL's seed)")
    ap.add_argument("--first-seed", type=int, default=0, help="start the seeds here: --first-seed 1 --seeds 2 runs seeds 1 and 2")
    ap.add_argument("--minutes", type=float, default=30.0, help="training time per side and seed")
    ap.add_argument(
        "--iterations", type=int, default=0, help="at most this many iterations per side; 0 = the recipe's run.iterations x 3"
    )
    ap.add_argument("--eval-every", type=int, default=0, help="evaluate every N iterations; 0 = the recipe's eval.every")
    ap.add_argument("--eval-prompts", type=int, default=0, help="held-out problems per evaluation; 0 = all (task.n_test)")
    ap.add_argument("--sides", default="rlvr,trl", help="comma-separated: rlvr, trl")
    ap.add_argument("--trl-gc", action="store_true", help="TRL with its default gradient checkpointing (off: its fastest)")
    ap.add_argument(
        "--set", dest="sets", action="append", default=[], help="override a recipe field, e.g. rollout.engine=transformers"
    )
    ap.add_argument("--smoke", action="store_true", help="tiny scale: " + " ".join(SMOKE))
    ap.add_argument("--workdir", type=Path, help="where the runs go (default: a temporary folder, removed)")
    ap.add_argument("--out", type=Path, help="results file (default bench/results/learning.json, or learning-smoke.json)")
    ap.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="train nothing: merge the per-seed results of earlier runs of this bench (seeds or sides run apart, with the "
        "same recipe and settings) into --out, with the figures over all their seeds",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args = ap.parse_args([*SMOKE, *(argv if argv is not None else sys.argv[1:])])
    return args


def bench_config(args: argparse.Namespace, seed: int) -> Config:
    cfg = load_config(args.recipe)
    data = cfg.model_dump(mode="json", exclude_none=True)
    # this script evaluates; keep_last = 1: a version is deleted once its successor is committed (it was evaluated before)
    data = apply_overrides(
        data, [*args.sets, f"run.seed={seed}", "eval.every=0", f"eval.prompts={args.eval_prompts}", "checkpoint.keep_last=1"]
    )
    cfg = parse_config(data, f"{args.recipe} + --set")
    if cfg.update.kl_beta or cfg.update.epochs != 1 or cfg.update.aggregation != "token_mean" or cfg.verify.advantage != "grpo":
        raise SystemExit("bench/learning.py maps only kl_beta 0, epochs 1, token_mean and grpo advantages onto TRL")
    return cfg


# ---- the shared evaluator and reward --------------------------------------------------------


def score_texts(problems: list[dict], pairs: list[tuple[str, str]], cfg: Config, folder: Path) -> list[dict]:
    """rlvr's verifier (DuckDB + its Python tiers) on (prompt_id, response text) pairs: score rows in order."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        p, r = Path(tmp) / "problems.parquet", Path(tmp) / "rollouts.parquet"
        write_table(problems, PROBLEMS, p)
        rows, seen = [], {}
        for pid, text in pairs:
            k = seen[pid] = seen.get(pid, -1) + 1
            rows.append(
                {
                    "iteration": 0,
                    "prompt_id": pid,
                    "sample_idx": k,
                    "prompt_token_ids": [0],
                    "response_token_ids": [0],
                    "response_logprobs": [0.0],
                    "response_text": text,
                    "num_response_tokens": 1,
                    "finish_reason": "stop",
                    "policy_version": 0,
                    "engine": "bench",
                    "temperature": 0.0,
                    "seed": 0,
                }
            )
        write_table(rows, ROLLOUTS, r)
        table = score([r], [p], cfg.verify).to_pylist()
    order = {(t["prompt_id"], t["sample_idx"]): t for t in table}
    seen = {}
    out = []
    for pid, _ in pairs:
        k = seen[pid] = seen.get(pid, -1) + 1
        out.append(order[(pid, k)])
    return out


def held_out_accuracy(run_dir: str | Path, i: int) -> float:
    """evaluate(i) of a run (rlvr's own stage: the rendered held-out prompts, eval.prompts of them,
    greedy, the run's engine and verifier), and its accuracy read back from the run's evals table."""
    stages.evaluate(run_dir, i)
    rows = run_sql(run_dir, f"SELECT avg(correct::INT) AS acc FROM evals WHERE iteration = {int(i)}").to_pylist()
    return float(rows[0]["acc"])


def evaluate_model(model, tok, cfg: Config, folder: Path) -> float:
    """A model held in memory (TRL's policy) through the very stage rlvr's side is evaluated by: it is
    saved, becomes policy v0 of a throwaway run with the same config (model.path = the copy), and
    that run's evaluate(0) scores it. Both sides' numbers come from one code path."""
    ckpt, d = folder / "eval-policy", folder / "eval-run"
    shutil.rmtree(ckpt, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    data = cfg.model_dump(mode="json", exclude_none=True)
    data["model"] = {k: v for k, v in data["model"].items() if k != "name"} | {"path": str(ckpt)}
    create_or_open(d, parse_config(data, "bench/learning.py evaluation"), 1)
    stages.prepare(d)
    try:
        return held_out_accuracy(d, 0)
    finally:
        # the vLLM worker (~6 GB with its KV cache) must not sit beside TRL's training: with it, TRL's
        # ~16-18 GB peak was OOM-killed on a 24 GB machine; the next evaluation starts it again (untimed)
        engines.close_all()
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(ckpt, ignore_errors=True)


# ---- the two sides ---------------------------------------------------------------------------


def trl_config(cfg: Config, folder: Path, seed: int, n_iter: int, *, gc: bool):
    """TRL's GRPOConfig with the recipe's settings: one TRL generation batch = one rlvr iteration
    (prompts x G samples, `update.minibatches` optimiser steps), n_iter of them."""
    from trl import GRPOConfig

    r, u = cfg.rollout, cfg.update
    batch = r.prompts_per_iteration * r.group_size
    if batch % u.minibatches:
        raise SystemExit(f"prompts x G = {batch} must divide into update.minibatches = {u.minibatches} for TRL")
    scheduler = {"constant": "constant_with_warmup", "cosine": "cosine_with_min_lr"}[u.schedule]
    return GRPOConfig(
        output_dir=str(folder / "trl"),
        seed=seed,
        use_cpu=True,
        use_vllm=False,
        bf16=False,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        max_steps=n_iter * u.minibatches,
        per_device_train_batch_size=batch // u.minibatches,
        steps_per_generation=u.minibatches,
        gradient_accumulation_steps=1,
        num_generations=r.group_size,
        max_completion_length=r.max_new_tokens,
        temperature=r.temperature,
        top_p=r.top_p,
        learning_rate=u.lr,
        lr_scheduler_type=scheduler,
        warmup_steps=u.warmup_steps,
        weight_decay=u.weight_decay,
        adam_beta1=u.betas[0],
        adam_beta2=u.betas[1],
        max_grad_norm=u.max_grad_norm,
        lr_scheduler_kwargs={"min_lr_rate": u.min_lr_ratio} if u.schedule == "cosine" else None,
        loss_type="dapo",
        beta=0.0,
        epsilon=u.eps_low,
        epsilon_high=u.eps_high,
        num_iterations=1,
        scale_rewards="group",
        mask_truncated_completions=u.mask_truncated,
        gradient_checkpointing=gc,
    )


def trl_trainer(cfg: Config, problems: list[dict], folder: Path, seed: int, n_iter: int, *, gc: bool, callbacks: list):
    """TRL's GRPOTrainer on the recipe's model and training problems (the chat format it templates),
    rewarded by rlvr's verifier (the same DuckDB scoring and reward weights), for n_iter iterations."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    base = base_model(cfg)  # the folder rlvr's prepare copies into policy v0
    train = [x for x in problems if x["split"] == "train"]
    # the same turns rollout renders (rlvr.problems.prompts: [prompt] system, few-shot, the templated user turn);
    # TRL applies the model's chat template to them itself
    chats = prompts.conversations(problems, cfg.prompt, "train")
    ds = Dataset.from_list([{"prompt": chats[x["prompt_id"]], "prompt_id": x["prompt_id"]} for x in train])

    def reward(completions: list, prompt_id: list[str], **_: object) -> list[float]:
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [s["reward"] for s in score_texts(problems, list(zip(prompt_id, texts, strict=True)), cfg, folder)]

    return GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32),
        args=trl_config(cfg, folder, seed, n_iter, gc=gc),
        train_dataset=ds,
        reward_funcs=reward,
        processing_class=AutoTokenizer.from_pretrained(base),
        callbacks=callbacks,
    )


def run_rlvr(cfg: Config, args: argparse.Namespace, folder: Path, limit_s: float, n_iter: int, every: int) -> dict:
    run = create_or_open(folder / "rlvr-run", cfg, n_iter)
    d = str(run.paths.root)
    stages.prepare(d)
    curve, train_s, i = [], 0.0, 0
    while True:
        if i % every == 0 or train_s >= limit_s or i == n_iter:
            acc = held_out_accuracy(d, i)
            curve.append({"iteration": i, "train_s": round(train_s, 1), "accuracy": acc})
            print(f"# rlvr v{i}: held-out {acc:.3f} after {train_s:.0f}s of training", file=sys.stderr, flush=True)
        if train_s >= limit_s or i == n_iter:
            break
        t = time.perf_counter()
        stages.rollout(d, i)
        stages.verify(d, i)
        stages.update(d, i)
        train_s += time.perf_counter() - t
        i += 1
    reward = run_sql(d, "SELECT iteration, avg(reward) AS r FROM scores GROUP BY 1 ORDER BY 1").to_pylist()
    engines.close_all()  # the vLLM worker holds GiBs of KV cache: free them before TRL starts
    return {"curve": curve, "train_reward": [round(x["r"], 4) for x in reward], "iterations": i}


def run_trl(
    cfg: Config,
    problems: list[dict],
    args: argparse.Namespace,
    folder: Path,
    limit_s: float,
    n_iter: int,
    every: int,
    seed: int,
) -> dict:
    from transformers import TrainerCallback

    u = cfg.update
    state = {"train_s": 0.0, "t": 0.0, "curve": [], "reward": []}

    class Clock(TrainerCallback):
        """Training time without evaluation; evaluation every `every` generation batches; the time limit."""

        def on_train_begin(self, a, s, c, **kw):
            acc = evaluate_model(kw["model"], kw["processing_class"], cfg, folder)  # v0: the base, as rlvr's side is
            state["curve"].append({"iteration": 0, "train_s": 0.0, "accuracy": acc})
            print(f"# trl  v0: held-out {acc:.3f}", file=sys.stderr, flush=True)
            state["t"] = time.perf_counter()

        def on_step_end(self, a, s, c, **kw):
            if s.global_step % u.minibatches:
                return
            state["train_s"] += time.perf_counter() - state["t"]
            i = s.global_step // u.minibatches
            if i % every == 0 or state["train_s"] >= limit_s or i == n_iter:
                acc = evaluate_model(kw["model"], kw["processing_class"], cfg, folder)
                state["curve"].append({"iteration": i, "train_s": round(state["train_s"], 1), "accuracy": acc})
                print(f"# trl  v{i}: held-out {acc:.3f} after {state['train_s']:.0f}s of training", file=sys.stderr, flush=True)
            if state["train_s"] >= limit_s:
                c.should_training_stop = True
            state["t"] = time.perf_counter()

        def on_log(self, a, s, c, logs=None, **kw):
            if logs and "reward" in logs and s.global_step % u.minibatches == 1 % u.minibatches:
                state["reward"].append(round(logs["reward"], 4))

    trainer = trl_trainer(cfg, problems, folder, seed, n_iter, gc=args.trl_gc, callbacks=[Clock()])
    trainer.train()
    return {"curve": state["curve"], "train_reward": state["reward"], "iterations": trainer.state.global_step // u.minibatches}


# ---- figures ----------------------------------------------------------------------------------


def time_to_reach(curve: list[dict], target: float) -> float | None:
    """Training seconds of the first evaluation at or above `target`."""
    return next((p["train_s"] for p in curve if p["accuracy"] >= target - 1e-9), None)


def seed_figures(base: float, sides: dict[str, dict]) -> dict:
    out: dict = {"base_accuracy": base}
    for name, s in sides.items():
        accs = [p["accuracy"] for p in s["curve"]]
        out |= {
            f"{name}_best_accuracy": max(accs),
            f"{name}_final_accuracy": accs[-1],
            f"{name}_gain": round(max(accs) - base, 4),
            f"{name}_min_margin_to_base": round(min(accs) - base, 4),
            f"{name}_train_s": s["curve"][-1]["train_s"],
            f"{name}_iterations": s["iterations"],
        }
    if {"rlvr", "trl"} <= sides.keys():
        best = {n: max(p["accuracy"] for p in s["curve"]) for n, s in sides.items()}
        for a, b in (("rlvr", "trl"), ("trl", "rlvr")):
            out[f"{a}_to_reach_{b}_best_s"] = time_to_reach(sides[a]["curve"], best[b])
        ours, theirs = out["rlvr_to_reach_trl_best_s"], time_to_reach(sides["trl"]["curve"], best["trl"])
        out["time_to_trl_best_ratio"] = round(ours / theirs, 3) if ours is not None and theirs else None
    return out


def _version(pkg: str) -> str | None:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return None


def summary(per_seed: list[dict]) -> dict:
    """The figures over seeds (the median where there are several, the list when one seed has none)."""
    figures: dict = {}
    for key in per_seed[0]["figures"]:
        vals = [s["figures"].get(key) for s in per_seed]
        figures[key] = vals[0] if len(vals) == 1 else (statistics.median(vals) if None not in vals else vals)
    figures["seeds"] = len(per_seed)
    return figures


# settings that must agree for results to be merged (the command, seeds and first seed may differ)
SAME_SETTINGS = ("recipe", "minutes", "eval_prompts", "trl_gradient_checkpointing", "config")


def combine(paths: list[Path], out_path: Path) -> dict:
    """Merge earlier results of this bench: one seed's sides may come from different files (each side
    once), every file must have been run with the same SAME_SETTINGS; figures are recomputed."""
    runs = [json.loads(p.read_text()) for p in paths]
    first = runs[0]
    for p, r in zip(paths, runs, strict=True):
        if r.get("smoke"):
            raise SystemExit(f"--combine: {p} is a smoke run; its figures measure nothing")
        for key in SAME_SETTINGS:
            if r["settings"].get(key) != first["settings"].get(key):
                raise SystemExit(f"--combine: {p} has another settings.{key} than {paths[0]}: results of different benches")
    seeds: dict[int, dict] = {}
    for p, r in zip(paths, runs, strict=True):
        for entry in r["per_seed"]:
            sides = seeds.setdefault(entry["seed"], {})
            for name, side in entry["sides"].items():
                if name in sides:
                    raise SystemExit(f"--combine: seed {entry['seed']}'s {name} side is in {p} and in an earlier file")
                sides[name] = side
    per_seed = []
    for seed, sides in sorted(seeds.items()):
        bases = {side["curve"][0]["accuracy"] for side in sides.values()}
        if len(bases) > 1:
            raise SystemExit(f"--combine: seed {seed}'s sides start from different v0 accuracies {sorted(bases)}")
        per_seed.append({"seed": seed, "figures": seed_figures(bases.pop(), sides), "sides": sides})
    return write_result(
        out_path,
        summary(per_seed),
        smoke=False,
        note="figures: the median over seeds where there are several; per-seed curves below; combined from "
        + ", ".join(str(p) for p in paths),
        per_seed=per_seed,
        machine=[r["machine"] for r in runs],
        versions=[r["versions"] for r in runs],
        settings={**first["settings"], "command": "python bench/learning.py --combine " + " ".join(map(str, paths))}
        | {"seeds": len(per_seed), "first_seed": per_seed[0]["seed"], "combined": [r["settings"]["command"] for r in runs]},
    )


def main() -> None:
    args = parse_args()
    if args.combine:
        combine(args.combine, args.out or RESULTS / "learning.json")
        return
    hf_logging.disable_progress_bar()
    sides = [s for s in args.sides.split(",") if s]
    if not sides or set(sides) - {"rlvr", "trl"}:
        raise SystemExit(f"--sides {args.sides!r}: a comma-separated list of rlvr, trl")
    out_path = args.out or RESULTS / ("learning-smoke.json" if args.smoke else "learning.json")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rlvr-bench-learning-"))
    from rlvr.models import registry as models

    name = bench_config(args, 0).model.name
    if name and not models.is_prepared(name):  # the bench builds its own inputs: convert the model once, offline
        models.prepare(name)
    per_seed = []
    try:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            cfg = bench_config(args, seed)
            n_iter = args.iterations or cfg.run.iterations * 3
            every = args.eval_every or cfg.eval.every or 5
            problems = load_problems(cfg.task, cfg.prompt)  # templated, as prepare writes them
            results = {}
            for name in sides:
                folder = work / f"seed{seed}-{name}"
                folder.mkdir(parents=True, exist_ok=True)
                t0 = time.perf_counter()
                if name == "rlvr":
                    results[name] = run_rlvr(cfg, args, folder, args.minutes * 60, n_iter, every)
                else:
                    results[name] = run_trl(cfg, problems, args, folder, args.minutes * 60, n_iter, every, seed)
                results[name]["wall_s"] = round(time.perf_counter() - t0, 1)
                shutil.rmtree(folder, ignore_errors=True)
            base = results[sides[0]]["curve"][0]["accuracy"]  # v0 is the same model on both sides
            per_seed.append({"seed": seed, "figures": seed_figures(base, results), "sides": results})
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    cfg = bench_config(args, 0)
    write_result(
        out_path,
        summary(per_seed),
        smoke=args.smoke,
        note="SMOKE RUN: tiny scale, proves both sides run end to end; the figures measure nothing"
        if args.smoke
        else "figures: the median over seeds where there are several; per-seed curves below",
        per_seed=per_seed,
        versions={p: _version(p) for p in ("torch", "transformers", "trl", "accelerate", "rlvr")},
        settings={
            "recipe": str(args.recipe.relative_to(ROOT)) if args.recipe.is_relative_to(ROOT) else str(args.recipe),
            "minutes": args.minutes,
            "seeds": args.seeds,
            "first_seed": args.first_seed,
            "eval_prompts": args.eval_prompts or cfg.task.n_test,
            "trl_gradient_checkpointing": args.trl_gc,
            "config": cfg.model_dump(mode="json", exclude_none=True),
        },
    )


if __name__ == "__main__":
    main()
