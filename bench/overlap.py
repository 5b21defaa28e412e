"""Benchmark: rollout overlapped with training (rollout.max_staleness = 1) against synchronous (0), on two pinned workers.

    python bench/overlap.py                 # SmolLM2-135M-Instruct, the arithmetic recipe's batch, 6 iterations a side
    python bench/overlap.py --iterations 8 --repeats 2      # longer, sides in the order sync, async, sync, async
    python bench/overlap.py --smoke         # the tiny model, 3 iterations of 2 x 4: proves it runs; measures nothing

Issue 21's set-up for "several machines on one": a temporary Prefect server on 127.0.0.1, and two
`rlvr worker` processes with their own working directories, caches and PREFECT_HOMEs, sharing only
the run store and the Prefect API:
- gen: `rlvr worker --stages rollout,verify` pinned to core 0 (`taskset -c 0`, and vLLM's OpenMP
  threads bound to it), a stand-in for a rollout GPU;
- train: `rlvr worker --stages update` pinned to core 1, a stand-in for a training GPU;
and the driver, `rlvr train` with `[placement]` sending the stages there. Each side is one run of the
recipe's batch (prompts_per_iteration x group_size samples, its max_new_tokens and temperature),
with dynamic sampling and evaluation off, so that both sides sample and train on exactly that many
samples per iteration. Synchronous (k = 0), rollout(i) waits for update(i-1); with k = 1 it samples
v_{i-1} while update(i-1) trains, on the other core.

Figures, from the runs' commit records (each stage's commit time and seconds):
- `{side}_period_s`: steady-state seconds per iteration, (commit of the last update - commit of
  update 0) / (iterations - 1): the first iteration's cold starts (vLLM engine, trainer) are left
  out of both sides;
- `{side}_samples_per_s`: samples per iteration / period;
- `{side}_rollout_s`, `{side}_verify_s`, `{side}_update_s`: the stages' median seconds (iterations >= 1);
- `ratio`: async samples/s over sync samples/s (issue 21's goal: >= 1.6);
- `ideal_overlap_ratio`: the bound for two stages on two cores, (rollout + verify + update) / max(rollout
  + verify, update), from the synchronous side's medians; `overlap_efficiency_ratio` = ratio / ideal;
- `async_mean_staleness`: the rows' mean staleness (versions behind the newest policy).
With --repeats 2 each side's figures are the median over its repeats.

Needs `make vllm` for the vLLM engine (else the transformers engine; the figures name it) and
`taskset` (util-linux) with 2+ cores, else --no-pin. No network. Prints `key: value` lines and
writes bench/results/overlap.json (--smoke: overlap-smoke.json).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from machine import machine_info, write_result  # bench/machine.py

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
RECIPE = ROOT / "recipes" / "smollm2-arithmetic.toml"
SIDES = {"sync": 0, "async": 1}  # side -> rollout.max_staleness
SMOKE = ["--iterations", "3", "--model", "tiny", "--set", "rollout.prompts_per_iteration=2", "--set", "rollout.group_size=4"]
SMOKE += ["--set", "rollout.max_new_tokens=8", "--set", "rollout.engine=transformers"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=RECIPE, help="the config both sides run (default: %(default)s)")
    ap.add_argument("--iterations", type=int, default=6, help="iterations per side (>= 2; the first is the cold one)")
    ap.add_argument("--repeats", type=int, default=1, help="runs per side, alternating sync and async")
    ap.add_argument("--model", choices=["recipe", "tiny"], default="recipe", help="tiny: the locally built tiny model")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="override a recipe field (SECTION.FIELD=VALUE)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the workers to a core each (taskset)")
    ap.add_argument("--smoke", action="store_true", help="tiny scale: " + " ".join(SMOKE))
    ap.add_argument("--out", type=Path, help="results file (default bench/results/overlap.json, or overlap-smoke.json)")
    ap.add_argument("--keep", type=Path, help="write the runs and logs under this folder and keep them")
    args = ap.parse_args(argv)
    if args.smoke:
        args = ap.parse_args([*SMOKE, *(argv if argv is not None else sys.argv[1:])])
    if args.iterations < 2:
        ap.error("--iterations must be >= 2: the steady-state period needs two updates after the cold first one")
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    return args


# ---- the runs -----------------------------------------------------------------------------------------


def side_config(args: argparse.Namespace, k: int, pools: dict[str, str]):
    """The recipe with the bench's overrides, max_staleness k and the stages placed on `pools`."""
    from rlvr.config import apply_overrides, load_config, parse_config

    cfg = load_config(args.recipe)
    fixed = ["rollout.dynamic_sampling_rounds=0", "eval.every=0", f"rollout.max_staleness={k}"]
    fixed += [f"run.iterations={args.iterations}", *(f"placement.{s}={p}" for s, p in pools.items())]
    data = cfg.model_dump(mode="json", exclude_none=True)
    if args.model == "tiny":
        data["model"].pop("name", None)
    return parse_config(apply_overrides(data, [*fixed, *args.sets]), f"{args.recipe} + the bench's --set")


def _pin(core: int | None) -> list[str]:
    return [] if core is None else ["taskset", "-c", str(core)]


def start_worker(home: Path, api: str, stages: str, pool: str, core: int | None) -> subprocess.Popen:
    """`rlvr worker` as if on its own machine: its own cwd, cache, PREFECT_HOME and log, on one core."""
    from rlvr.models.registry import cache_root

    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "RLVR_CACHE": str(home / "cache"), "PREFECT_HOME": str(home / "prefect"), "PREFECT_API_URL": api}
    if core is not None:  # vLLM on CPU binds its OpenMP threads itself: to the worker's own core
        env |= {"VLLM_CPU_OMP_THREADS_BIND": str(core), "OMP_NUM_THREADS": "1"}
    (home / "cache").mkdir(exist_ok=True)
    for entry in cache_root().iterdir():  # the models (prepared, tiny): what `rlvr models prepare` gives a machine
        (home / "cache" / entry.name).symlink_to(entry)
    cmd = [*_pin(core), sys.executable, "-m", "rlvr.flows.cli", "worker", "--stages", stages, "--pool", pool]
    cmd += ["--name", f"{pool}-worker", "--device", "cpu"]
    log = (home / "worker.log").open("w")
    return subprocess.Popen(cmd, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def run_side(args: argparse.Namespace, side: str, work: Path, api: str, cores: tuple[int | None, int | None]) -> Path:
    """One run of the recipe: two workers (gen, train) and the driver; the run folder."""
    pools = {"rollout": f"gen-{side}", "verify": f"gen-{side}", "update": f"train-{side}"}
    cfg = side_config(args, SIDES[side.split("-")[0]], pools)
    driver = work / "driver"
    driver.mkdir(parents=True, exist_ok=True)
    (driver / "config.toml").write_text(cfg.to_toml())
    run = work / "run"  # a local run folder every worker sees at the same absolute path (docs/guide/workers.md)
    workers = [
        start_worker(work / "gen", api, "rollout,verify", pools["rollout"], cores[0]),
        start_worker(work / "train", api, "update", pools["update"], cores[1]),
    ]
    env = {**os.environ, "PREFECT_API_URL": api, "PREFECT_HOME": str(driver / "prefect"), "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "rlvr.flows.cli", "train", "config.toml", "--run", str(run)]
    print(
        f"# {side}: rollout.max_staleness={cfg.rollout.max_staleness}, {args.iterations} iterations", file=sys.stderr, flush=True
    )
    try:
        with (driver / "driver.log").open("w+") as log:
            done = subprocess.run(cmd, cwd=driver, env=env, stdout=log, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                log.seek(0)
                raise SystemExit(f"the {side} driver failed (exit {done.returncode}):\n{log.read()[-3000:]}")
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=60)
    return run


def _ended(record) -> float:
    return datetime.fromisoformat(record.created_at).timestamp()


def side_figures(run: Path, iterations: int) -> dict:
    """A side's figures from its commit records and its rollouts (see the module docstring)."""
    from rlvr.schema import ROLLOUT, UPDATE, VERIFY
    from rlvr.store.records import read_record
    from rlvr.store.run import open_run
    from rlvr.views.sql import run_sql

    paths = open_run(run).paths
    rec = {(s, i): read_record(paths.record(s, i)) for s in (ROLLOUT, VERIFY, UPDATE) for i in range(iterations)}
    period = (_ended(rec[(UPDATE, iterations - 1)]) - _ended(rec[(UPDATE, 0)])) / (iterations - 1)
    q = "SELECT count(*) AS n, avg(staleness) AS staleness, any_value(engine) AS engine FROM rollouts"
    row = run_sql(run, q, timeout_s=60).to_pylist()[0]
    samples = row["n"] / iterations
    steady = range(1, iterations)
    f = {f"{s}_s": round(statistics.median(rec[(s, i)].seconds for i in steady), 2) for s in (ROLLOUT, VERIFY, UPDATE)}
    return f | {
        "period_s": round(period, 2),
        "samples_per_s": round(samples / period, 3),
        "samples_per_iteration": samples,
        "mean_staleness": round(row["staleness"], 3),
        "engine": row["engine"],
        "wall_s": round(_ended(rec[(UPDATE, iterations - 1)]) - _ended(rec[(ROLLOUT, 0)]) + rec[(ROLLOUT, 0)].seconds, 1),
    }


def summarize(per_run: dict[str, list[dict]]) -> dict:
    """Each side's medians over its repeats, the ratio and the ideal bound (module docstring)."""
    f: dict = {}
    for side, runs in per_run.items():
        for key in runs[0]:
            values = [r[key] for r in runs]
            f[f"{side}_{key}"] = statistics.median(values) if isinstance(values[0], (int, float)) else values[0]
    f["ratio"] = round(f["async_samples_per_s"] / f["sync_samples_per_s"], 3)
    gen = f["sync_rollout_s"] + f["sync_verify_s"]
    f["ideal_overlap_ratio"] = round((gen + f["sync_update_s"]) / max(gen, f["sync_update_s"]), 3)
    f["overlap_efficiency_ratio"] = round(f["ratio"] / f["ideal_overlap_ratio"], 3)
    return f


def main() -> None:
    args = parse_args()
    from rlvr.flows.lifecycle import TemporaryServer

    from rlvr.models import registry as models
    from rlvr.models.tiny import base_model

    cfg = side_config(args, 0, {})
    if cfg.model.name and not models.is_prepared(cfg.model.name):
        models.prepare(cfg.model.name)
    print(f"# model {base_model(cfg)}", file=sys.stderr, flush=True)  # the tiny one is built here, once
    pin = not args.no_pin and shutil.which("taskset") is not None and len(os.sched_getaffinity(0)) >= 2
    cores = (0, 1) if pin else (None, None)
    work = args.keep or Path(tempfile.mkdtemp(prefix="rlvr-bench-overlap-"))
    server = TemporaryServer()
    api = server.start(180.0)
    print(f"# Prefect server {api}; workers pinned: {pin}", file=sys.stderr, flush=True)
    per_run: dict[str, list[dict]] = {s: [] for s in SIDES}
    t0 = time.perf_counter()
    try:
        for rep in range(args.repeats):
            for side in SIDES:
                run = run_side(args, f"{side}-{rep}", work / f"{side}-{rep}", api, cores)
                per_run[side].append(side_figures(run, args.iterations))
                print(f"# {side}-{rep}: {per_run[side][-1]}", file=sys.stderr, flush=True)
    finally:
        server.stop()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    out = args.out or RESULTS / ("overlap-smoke.json" if args.smoke else "overlap.json")
    write_result(
        out,
        summarize(per_run),
        per_run=per_run,
        bench_wall_s=round(time.perf_counter() - t0, 1),
        machine=machine_info(platform=platform.platform()),
        versions=_versions(),
        settings=vars(args) | {"pinned": pin},
    )
    print(f"wrote {out}")


def _versions() -> dict:
    import importlib.metadata as md

    return {p: md.version(p) for p in ("rlvr", "prefect", "torch", "transformers")}


if __name__ == "__main__":
    main()
