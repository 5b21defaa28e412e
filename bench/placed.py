"""Benchmark: what the placed protocol costs a run, stage by stage (issue 40: where the time goes).

    .venv/bin/python bench/placed.py      # tiny recipe, 3 iterations, K = 2, N = 2, 3 repeats: ~9 min on 2 cores
    .venv/bin/python bench/placed.py --iterations 1 --prompts 2 --repeats 1 --out /tmp/p.json   # tests/integration/test_bench_placed.py

The same run twice, each driven by `rlvr train` against one `prefect server start` on 127.0.0.1:
  - in one process: rollout and verify in K parts one after another, the update as N processes of one
    torchrun (update.nproc = N);
  - placed: two `rlvr worker`s of pool gen take the parts of rollout and verify, two of pool train are
    the update's N nodes (update.nnodes = N, rlvr.tasks.gang); the driver commits each stage from its parts.
Every worker is a machine of its own (folder, cache, PREFECT_HOME; tests/helpers/machines.py). No
evaluation and no asynchronous rollout, so that no two stages overlap.

Each stage's commit record holds its own seconds, and a stage in parts lists its parts' seconds. A
stage's work is its parts' seconds (the slowest part's when they run side by side, placed; their sum
in one process) plus its own. A run's wall clock is from the start of its first stage to the commit of
its last, read from the records, so the driver's own start is left out of both. The rest, the wall
clock less the stages' work, is what orchestration cost: Prefect's task runs in one process; placed,
also submitting each part or node, a worker taking it, heartbeats, the driver's polls and a
worker's fetch of the run's inputs. Both runs commit the same bytes (tests/e2e/test_shards.py,
test_nodes.py); only the clock differs. Writes bench/results/placed.json (bench/README.md's conventions).
The machine is shared by the driver, the server and four workers: the figure is an upper bound on a
cluster's, where each worker has a machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

from machine import write_result  # bench/machine.py

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = Path(__file__).parent / "results" / "placed.json"
PARTS = 2  # K = rollout.shards
NODES = 2  # N = update.nnodes (placed) or update.nproc (in one process)


def config(args: argparse.Namespace, placed: bool):
    """The recipe at this bench's size, in K parts, the update on N nodes (placed) or N processes (not)."""
    from rlvr.config import Config
    from rlvr.config.load import load_config

    data = load_config(args.recipe).model_dump()
    data["run"]["iterations"] = args.iterations
    data["rollout"] |= {"prompts_per_iteration": args.prompts, "shards": PARTS, "device": "cpu", "max_staleness": 0}
    data["update"] |= {"nproc": 1, "nnodes": NODES} if placed else {"nproc": NODES}
    data["eval"]["every"] = 0  # (evaluate(i) would run beside rollout(i + 1): the stages' work would overlap)
    data["placement"] = {"rollout": "gen", "verify": "gen", "update": "train"} if placed else {}
    return Config.model_validate(data)


def stage_clock(run: str) -> dict:
    """From the run's commit records: the wall clock from its first stage's start to its last commit, the
    stages' work (see the module docstring), how many stages and parts were committed, and the workers
    that committed them."""
    from rlvr.store.records import read_record
    from rlvr.store.run import open_run

    stages_dir = open_run(run).paths.stages
    names = sorted(p for p in stages_dir.glob("**/*.json") if stages_dir / "pruned" not in p.parents)
    every = [read_record(p) for p in names]
    records = [r for r, p in zip(every, names, strict=True) if ".part-" not in p.name and ".node-" not in p.name]
    spans, parts = [], 0  # (start, end, stage, iteration) of each stage, its parts included
    for rec in records:
        own = rec.seconds
        if done := rec.extra.get("parts") or []:
            secs = [p["seconds"] for p in done]
            own += max(secs) if any(p.get("worker") for p in done) else sum(secs)  # side by side on workers, or in turn
            parts += len(done)
        end = datetime.fromisoformat(rec.created_at).timestamp()
        spans.append((end - own, end, rec.stage, rec.iteration))
    spans.sort()
    wall = max(end for _, end, _, _ in spans) - spans[0][0]
    work = sum(end - start for start, end, _, _ in spans)
    # each stage's wait: from the commit of the stage before it to its own start (its parts' start, with parts)
    waits = [{"stage": st, "iteration": i, "wait_s": round(a - spans[k - 1][1], 2)} for k, (a, _, st, i) in enumerate(spans) if k]
    by_stage = {st: round(sum(w["wait_s"] for w in waits if w["stage"] == st), 2) for st in sorted({w["stage"] for w in waits})}
    return {
        "wall_s": round(wall, 2),
        "waits_by_stage_s": by_stage,
        "waits": waits,
        "work_s": round(work, 2),
        "orchestration_s": round(wall - work, 2),
        "stages": len(records),
        "parts": parts,
        "workers": sorted({(r.worker or {}).get("name") for r in every} - {None}),
    }


def drive(home: Path, api: str, cfg, run: Path, iterations: int) -> float:
    """`rlvr train` of cfg as the driver on machine `home`; its seconds. Fails with the driver's log."""
    from tests.helpers.machines import driver_command

    (home / "placed.toml").write_text(cfg.to_toml())
    cmd, env = driver_command(home, api, str(run), iterations)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=home, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise SystemExit(f"the driver failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=ROOT / "recipes" / "tiny-demo.toml")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3, help="runs of each side (medians reported)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    from rlvr.models.tiny import ensure_tiny_model
    from tests.helpers.machines import free_port, machine, start_prefect_server, stop_all, worker_process

    ensure_tiny_model(config(args, False))
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-placed-") as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        (tmp / "server").mkdir()
        server = start_prefect_server(tmp / "server", port)
        api = f"http://127.0.0.1:{port}/api"
        homes = {n: machine(tmp, n) for n in ("driver", "gen-a", "gen-b", "train-a", "train-b")}
        procs = [server]
        gen, train = ("--stages", "rollout,verify", "--pool", "gen"), ("--stages", "update", "--pool", "train")
        repeats, made = [], set()
        try:  # the workers wait, idle, through the runs in one process too
            for name, w in (("gen-a", gen), ("gen-b", gen), ("train-a", train), ("train-b", train)):
                procs.append(worker_process(homes[name], api, *w, "--name", name))
            for r in range(args.repeats):
                runs = {side: tmp / f"{side}-{r}" for side in ("one-process", "placed")}
                secs = {
                    side: drive(homes["driver"], api, config(args, side == "placed"), run, args.iterations)
                    for side, run in runs.items()
                }
                one, placed = stage_clock(str(runs["one-process"])), stage_clock(str(runs["placed"]))
                made |= set(placed["workers"])
                n = placed["stages"] + placed["parts"]
                repeats.append(
                    {
                        "repeat": r,
                        "one_process": one,
                        "placed": placed,
                        "overhead_per_stage_s": round((placed["orchestration_s"] - one["orchestration_s"]) / max(1, n), 2),
                        "driver_s": {side: round(v, 2) for side, v in secs.items()},
                    }
                )
                print(f"# repeat {r}: {repeats[-1]['overhead_per_stage_s']} s per placed stage", file=sys.stderr, flush=True)
        finally:
            stop_all(procs)

    def med(side: str, key: str) -> float:
        return round(statistics.median(x[side][key] for x in repeats), 2)

    figures = {
        "one_process_wall_s": med("one_process", "wall_s"),
        "one_process_work_s": med("one_process", "work_s"),
        "one_process_orchestration_s": med("one_process", "orchestration_s"),
        "placed_wall_s": med("placed", "wall_s"),
        "placed_work_s": med("placed", "work_s"),
        "placed_orchestration_s": med("placed", "orchestration_s"),
        "placed_stage_runs": repeats[0]["placed"]["stages"] + repeats[0]["placed"]["parts"],
        "placed_overhead_per_stage_s": round(statistics.median(x["overhead_per_stage_s"] for x in repeats), 2),
    }
    figures["placed_wall_ratio"] = round(figures["one_process_wall_s"] / figures["placed_wall_s"], 3)
    write_result(
        args.out,
        figures,
        repeats=repeats,
        workers_that_committed=sorted(made),
        versions={p: version(p) for p in ("prefect", "torch")},
        settings={"command": " ".join(["python", "bench/placed.py", *(argv or sys.argv[1:])])}
        | {k: str(v) for k, v in vars(args).items()},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
