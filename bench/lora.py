"""Benchmark: LoRA ([update.lora]) against a full fine-tune on the SmolLM2 arithmetic recipe, side by side.

    rlvr models prepare smollm2-135m-instruct      # once
    python bench/lora.py                           # 3 iterations a side, 50 held-out problems; ~10-15 min on 2 cores
    python bench/lora.py --iterations 2 --eval-prompts 20 --out /tmp/lora.json   # quicker

Two runs of recipes/smollm2-arithmetic.toml (its model, task, prompts, G, temperature, clip, schedule),
identical but for [update.lora] (--r, --alpha, all projections; LoRA's lr --lora-lr, 10x the full
fine-tune's as is usual for adapters), driven stage by stage and alternated iteration by iteration
(the same machine load on both). Each update runs in its own process, so its peak resident memory
(`updates.peak_memory_mb`, ru_maxrss) is the update's alone. Per iteration and side: update seconds
(the update stage's commit record), checkpoint bytes (policy/v_{i+1}: weights or adapter, tokenizer,
trainer_state.pt), peak memory, and held-out greedy accuracy of v_{i+1} (evaluate stage; v0 once,
shared). Rollouts use the recipe's engine setting (auto: vLLM when `make vllm` was run).
Prints `key: value` lines; writes bench/results/lora.json with machine, versions and settings.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from machine import machine_info, write_result  # bench/machine.py

ROOT = Path(__file__).resolve().parents[1]
STEP = """
import sys
from rlvr import stages
d, i, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if what == "update":
    stages.update(d, i)
else:
    stages.prepare(d)
    stages.rollout(d, i); stages.verify(d, i)
    if i == 0:
        stages.evaluate(d, 0)
    if what == "eval":
        stages.evaluate(d, i + 1)
"""


def _config(args: argparse.Namespace, lora: bool):
    from rlvr.config import Config

    data = tomllib.loads((ROOT / "recipes/smollm2-arithmetic.toml").read_text())
    data["run"]["iterations"] = args.iterations
    data["eval"].update(every=1, prompts=args.eval_prompts)
    data["checkpoint"] = {"keep_last": 1}
    if lora:
        data["update"]["lora"] = {"r": args.r, "alpha": args.alpha}
        data["update"]["lr"] = args.lora_lr
    return Config.model_validate(data)


def _step(run: Path, i: int, what: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", STEP, str(run), str(i), what], env=env, check=True)


def _iteration_figures(run: Path, i: int) -> dict:
    from rlvr.schema import EVALUATE, UPDATE
    from rlvr.store.records import read_record
    from rlvr.store.retention import folder_bytes
    from rlvr.store.run import open_run
    from rlvr.views.sql import run_sql

    paths = open_run(run).paths
    upd = read_record(paths.record(UPDATE, i))
    ev = read_record(paths.record(EVALUATE, i + 1))
    mem = run_sql(run, f"SELECT max(peak_memory_mb) AS m FROM updates WHERE iteration = {int(i)}").to_pylist()[0]["m"]
    return {
        "iteration": i,
        "update_s": round(upd.seconds, 2),
        "checkpoint_bytes": folder_bytes(paths.policy_dir(i + 1)),
        "peak_memory_mb": round(mem, 1),
        "held_out_accuracy": ev.extra["accuracy"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--eval-prompts", type=int, default=50)
    ap.add_argument("--r", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=32.0)
    ap.add_argument("--lora-lr", type=float, default=1e-4)
    ap.add_argument("--work", type=Path, default=Path("/tmp/rlvr-bench-lora"))
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/lora.json")
    args = ap.parse_args()

    import shutil

    from rlvr.checks.start import create_or_open

    shutil.rmtree(args.work, ignore_errors=True)
    runs = {"full": args.work / "full", "lora": args.work / "lora"}
    for side, run in runs.items():
        create_or_open(run, _config(args, side == "lora"), args.iterations)
    t0 = time.perf_counter()
    rows: dict[str, list[dict]] = {side: [] for side in runs}
    for i in range(args.iterations):
        for side, run in runs.items():
            _step(run, i, "rollout")
            _step(run, i, "update")
            _step(run, i, "eval")
            rows[side].append(_iteration_figures(run, i))
            print(f"{side} iteration {i}: {json.dumps(rows[side][-1])}", flush=True)
        _write(
            args, runs, rows, t0, complete=i + 1 == args.iterations
        )  # after every iteration: a cut-short run keeps its figures


def _write(args: argparse.Namespace, runs: dict[str, Path], rows: dict[str, list[dict]], t0: float, *, complete: bool) -> None:
    from rlvr.schema import EVALUATE
    from rlvr.store.records import read_record
    from rlvr.store.run import open_run

    base_acc = read_record(open_run(runs["full"]).paths.record(EVALUATE, 0)).extra["accuracy"]
    figures: dict = {"base_held_out_accuracy": base_acc}
    for side in runs:
        r = rows[side]
        figures[f"{side}_update_s"] = round(sum(x["update_s"] for x in r) / len(r), 2)
        figures[f"{side}_checkpoint_mb"] = round(r[-1]["checkpoint_bytes"] / 2**20, 2)
        figures[f"{side}_peak_memory_mb"] = max(x["peak_memory_mb"] for x in r)
        figures[f"{side}_final_held_out_accuracy"] = r[-1]["held_out_accuracy"]
    figures["update_s_ratio"] = round(figures["full_update_s"] / figures["lora_update_s"], 2)
    figures["checkpoint_ratio"] = round(figures["full_checkpoint_mb"] / figures["lora_checkpoint_mb"], 1)
    figures["peak_memory_ratio"] = round(figures["full_peak_memory_mb"] / figures["lora_peak_memory_mb"], 2)
    write_result(
        args.out,
        figures,
        per_iteration=rows,
        wall_s=round(time.perf_counter() - t0, 1),
        complete=complete,  # False: written after an iteration of a run that had more to go
        machine=machine_info(platform=platform.platform()),
        versions={p: importlib.metadata.version(p) for p in ("torch", "transformers", "peft", "rlvr")},
        settings=vars(args) | {"recipe": "recipes/smollm2-arithmetic.toml", "lora_target_modules": "default (all projections)"},
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
