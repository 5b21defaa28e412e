"""Rollout and verify on two workers against one (rollout.shards = 2), the update on two nodes against
one (update.nnodes = 2), and the whole iteration, each worker pinned to one core.

    .venv/bin/python bench/scale.py                     # SmolLM2 recipe, 16 prompts x 8, 3 repeats: ~10 min on 2 cores
    .venv/bin/python bench/scale.py --prompts 4 --repeats 1 --max-new-tokens 8 --out /tmp/s.json   # seconds (a test)

Two worker processes start first, each pinned to one core with `taskset` (core 0 and core 1), each
with torch and rlvr imported, waiting for lines "RUN ITERATION PART" on stdin; each runs that stage
(rlvr.stages.rollout) and answers with its seconds. Per repeat, alternating:
  - one worker: rollout(i) of a run with rollout.shards = 1, on the worker of core 0;
  - two workers: rollout(i) of the same run with rollout.shards = 2, part 1 on core 0 and part 2 on
    core 1 at once, then the stage's commit from its parts in this process.
Both runs sample policy v0 in every iteration (rollout.max_staleness past the iterations), so no
update runs between repeats. The engine stays warm in each worker across repeats, as in an
`rlvr worker`; each run's first repeat loads the model (reported apart, left out of the ratio).
No Prefect here: the placed protocol's own overhead (submitting, polling, heartbeats) is not in the
figure; tests/e2e/test_shards.py runs the same parts through it.

Then verify(0) of each run: the whole stage on core 0, and its two parts on cores 0 and 1 at once
followed by the stage's commit. Then the update: update(0)'s step (on the first run's scored
rollouts) as one node on core 0, then as two nodes of one process each, one world (update.nnodes =
2: torchrun's static rendezvous, as rlvr.tasks.gang runs it, without Prefect), each a fresh torchrun
with its model load, outputs thrown away; each side's seconds split into torchrun's start, the load
of weights and optimiser state, the steps and the checkpoint's write (rank 0's figures).

rollout_2workers_ratio = the one worker's seconds / the two workers' seconds, median over repeats
(issue 40's goal: >= 1.8); update_2nodes_ratio the same for the update (goal: >= 1.6), and
update_2nodes_step_ratio for its steps alone. iteration_2x2_ratio: rollout + verify + update on one
core each against rollout and verify in two parts and the update on two nodes (K = 2, N = 2), the
stages' medians added up. Where the rollout's time goes is read from each part's commit record:
engine start or weight load, generation, and the rest (prompts, writing, commit). Writes
bench/results/scale.json (bench/README.md's conventions).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from machine import write_result  # bench/machine.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULTS = Path(__file__).parent / "results" / "scale.json"
TAG = "@@scale "


def worker() -> None:
    """Answer 'RUN ITERATION PART' lines: run that rollout stage (PART -1: the whole stage); 'verify RUN
    ITERATION PART': the same for verify; and 'update RUN ITERATION NODE NODES PORT': update(i)'s step
    as node NODE of NODES (torchrun, one process, rendezvous at 127.0.0.1:PORT; NODES = 1: torchrun
    alone), its outputs thrown away."""
    from rlvr import stages
    from rlvr.store.records import read_record
    from rlvr.store.run import open_run

    print(TAG + json.dumps({"ready": True, "cpus": sorted(os.sched_getaffinity(0))}), flush=True)
    for line in sys.stdin:
        if line.startswith("update "):
            print(TAG + json.dumps(update_node(*line.split()[1:])), flush=True)
            continue
        if line.startswith("probe "):
            print(TAG + json.dumps({"seconds": probe(line.split()[1])}), flush=True)
            continue
        stage = stages.verify if line.startswith("verify ") else stages.rollout
        run, i, part = line.removeprefix("verify ").split()
        t0 = time.perf_counter()
        res = stage(run, int(i), part=None if part == "-1" else int(part))
        secs = time.perf_counter() - t0
        rec = read_record(open_run(run).paths.record(res.stage, int(i)))  # a part's result names the part's stage
        print(TAG + json.dumps({"seconds": secs, "rows": res.rows, "extra": rec.extra}), flush=True)


def update_node(run: str, i: str, node: str, nodes: str, port: str) -> dict:
    from rlvr import stages
    from rlvr.schema import UPDATE
    from rlvr.stages.lineage import stage_inputs
    from rlvr.stages.training import _spec
    from rlvr.store.run import open_run

    r = open_run(run)
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-node-") as tmp:
        spec = _spec(r, int(i), stage_inputs(r, UPDATE, int(i)), Path(tmp) / "policy", Path(tmp) / "metrics.parquet")
        at = stages.Node(int(node), int(nodes), "127.0.0.1", int(port)) if int(nodes) > 1 else None
        t0 = time.perf_counter()
        stats = stages.launch_update(spec, 1, at)
        return {"seconds": time.perf_counter() - t0, "stats": stats}


def probe(kind: str) -> float:
    """Seconds of a fixed single-threaded kernel: 'memory' streams 768 MB through RAM 20 times (a += b
    over 256 MB tensors), 'compute' multiplies matrices that stay in the core's caches."""
    import torch

    if kind == "memory":
        a, b = torch.ones(64 << 20), torch.ones(64 << 20)
        t0 = time.perf_counter()
        for _ in range(20):
            a.add_(b)
    else:
        x, w1, w2 = torch.ones(512, 576), torch.ones(576, 1536), torch.ones(1536, 2048)
        t0 = time.perf_counter()
        for _ in range(60):
            (x @ w1) @ w2
    return time.perf_counter() - t0


def time_probes(workers: list[Worker]) -> dict:
    """Each probe alone on core 0, then on both cores at once: how much one core's work slows the
    other's (the cores of one machine share its caches and memory bus; separate machines do not)."""
    out = {}
    for kind in ("compute", "memory"):
        workers[0].say(f"probe {kind}")
        alone = workers[0].read()["seconds"]
        for w in workers:
            w.say(f"probe {kind}")
        alone, both = round(alone, 3), round(statistics.mean(w.read()["seconds"] for w in workers), 3)
        out[kind] = {"alone_s": alone, "both_s": both, "slowdown": round(both / alone, 3)}  # from the figures it reports
    return out


class Worker:
    def __init__(self, core: int, env: dict):
        cmd = ["taskset", "-c", str(core), sys.executable, __file__, "--worker"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self.read()

    def send(self, run: Path, i: int, part: int) -> None:
        self.say(f"{run} {i} {part}")

    def say(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith(TAG):
                return json.loads(line[len(TAG) :])
            sys.stderr.write(line)
        raise RuntimeError(f"a worker exited with code {self.proc.wait()}")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def make_run(folder: Path, args: argparse.Namespace, shards: int) -> Path:
    """The recipe with this bench's batch, shards, and every rollout on v0; prepared."""
    from rlvr import stages
    from rlvr.checks.start import create_or_open
    from rlvr.config import Config
    from rlvr.config.load import load_config

    data = load_config(args.recipe).model_dump()
    data["rollout"] |= {
        "prompts_per_iteration": args.prompts,
        "max_new_tokens": args.max_new_tokens,
        "shards": shards,
        "dynamic_sampling_rounds": 0,  # parts cannot do a round together
        "max_staleness": args.repeats + 1,  # rollout(i) samples v0 for every i here: no update between repeats
        "engine": args.engine,
        "device": "cpu",
    }
    data["eval"]["every"] = 0
    run = create_or_open(folder, Config.model_validate(data), args.repeats + 1)
    stages.prepare(str(run.paths.root))
    return run.paths.root


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=Path(__file__).resolve().parents[1] / "recipes" / "smollm2-arithmetic.toml")
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--engine", default="transformers", choices=["transformers", "vllm"])
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats of each side, after one that loads the model")
    ap.add_argument("--update-repeats", type=int, default=2, help="timed repeats of the update, 1 node against 2")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def _split(rec_extra: list[dict], seconds: float) -> dict:
    """Where one side's seconds went: the slowest part's engine start or weight load and generation; the rest."""
    load = max(x.get("weight_load_seconds", 0) if x.get("warm") else x.get("engine_start_seconds", 0) for x in rec_extra)
    gen = max(x.get("generation_seconds", 0) for x in rec_extra)
    return {"load_s": round(load, 2), "generate_s": round(gen, 2), "other_s": round(seconds - load - gen, 2)}


def time_verify(one: Path, two: Path, workers: list[Worker]) -> dict:
    """verify(0) of the run in one part on core 0, then of the run in two parts on cores 0 and 1 at
    once, and its commit from the parts here (a stage commits once: one timing each)."""
    from rlvr import stages

    t0 = time.perf_counter()
    workers[0].say(f"verify {one} 0 -1")
    rows = workers[0].read()["rows"]
    t_one, t0 = time.perf_counter() - t0, time.perf_counter()
    for k, w in enumerate(workers):
        w.say(f"verify {two} 0 {k}")
    parts = [w.read()["rows"] for w in workers]
    merged = stages.verify(str(two), 0)
    t_two = time.perf_counter() - t0
    return {"one_worker_s": round(t_one, 2), "two_workers_s": round(t_two, 2), "rows": [rows, merged.rows], "part_rows": parts}


def _update_split(side: dict) -> dict:
    """Where one torchrun's seconds went: rank 0's load, steps and checkpoint; the rest is torchrun
    and Python starting, reading the rows, and the rendezvous."""
    s = side["stats"]
    known = {k: round(s[f"{k}_seconds"], 2) for k in ("load", "step", "save")}
    return {"start_s": round(side["seconds"] - sum(known.values()), 2)} | {f"{k}_s": v for k, v in known.items()}


def _ratio(a: float, b: float) -> float | None:
    """a / b; None when b took no time (an update with no group to learn from has no step)."""
    return round(a / b, 3) if b > 0 else None


def time_updates(run: Path, workers: list[Worker], repeats: int) -> list[dict]:
    """update(0)'s step on one pinned node, then on two (one process each, one world), `repeats` times each:
    the same micro-batches, shared by two cores instead of one. Each is a fresh torchrun, model load included."""
    import socket

    out = []
    for r in range(repeats):
        workers[0].say(f"update {run} 0 0 1 0")
        one = workers[0].read()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        for k, w in enumerate(workers):
            w.say(f"update {run} 0 {k} 2 {port}")
        two = [w.read() for w in workers]
        t_two = max(x["seconds"] for x in two)
        for w in workers:  # one node on each core at once: the baseline with the other core as busy as it is in `two`
            w.say(f"update {run} 0 0 1 0")
        loaded = [w.read() for w in workers]
        t_loaded = statistics.mean(x["seconds"] for x in loaded)
        rank0 = next(x for x in two if x["stats"])  # node 0 holds global rank 0, which returns the stats
        one_s, two_s, loaded_s = round(one["seconds"], 2), round(t_two, 2), round(t_loaded, 2)  # each ratio from these
        out.append(
            {
                "repeat": r,
                "one_node_s": one_s,
                "two_nodes_s": two_s,
                "ratio": _ratio(one_s, two_s),
                "step_ratio": _ratio(one["stats"]["step_seconds"], rank0["stats"]["step_seconds"]),
                "one_node_loaded_s": loaded_s,
                "loaded_ratio": _ratio(loaded_s, two_s),
                "one_node_loaded": _update_split(loaded[0]),
                "one_node": _update_split(one),
                "two_nodes": _update_split(rank0 | {"seconds": t_two}),
                "sequences": [one["stats"]["sequences"], rank0["stats"]["sequences"]],
                "world_size": [one["stats"]["world_size"], rank0["stats"]["world_size"]],
            }
        )
        print(f"# update repeat {r}: {out[-1]}", file=sys.stderr, flush=True)
    return out


def main() -> int:
    args = parse_args()
    if args.worker:
        worker()
        return 0
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("bench/scale.py pins two workers to cores 0 and 1: this machine has one core")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-scale-") as tmp:
        one, two = make_run(Path(tmp) / "one", args, 1), make_run(Path(tmp) / "two", args, 2)
        workers = [Worker(0, env), Worker(1, env)]
        try:
            for r in range(1 + args.repeats):
                t0 = time.perf_counter()
                workers[0].send(one, r, -1)
                a = workers[0].read()
                t_one = time.perf_counter() - t0
                t0 = time.perf_counter()
                for k, w in enumerate(workers):
                    w.send(two, r, k)
                parts = [w.read() for w in workers]
                from rlvr import stages

                merged = stages.rollout(str(two), r)  # the stage's commit from its parts
                t_two = time.perf_counter() - t0
                rows.append(
                    {
                        "repeat": r,
                        "one_worker_s": round(t_one, 2),
                        "two_workers_s": round(t_two, 2),
                        "ratio": round(t_one / t_two, 3),
                        "rows": [a["rows"], merged.rows],
                        "one_worker": _split([a["extra"]], t_one),
                        "two_workers": _split([p["extra"] for p in parts], t_two),
                        "tokens": [a["extra"].get("tokens"), sum(p["extra"].get("tokens", 0) for p in parts)],
                    }
                )
                print(f"# repeat {r}{' (loads the model)' if r == 0 else ''}: {rows[-1]}", file=sys.stderr, flush=True)
            verify = time_verify(one, two, workers)
            updates = time_updates(one, workers, args.update_repeats)
            probes = time_probes(workers)
        finally:
            for w in workers:
                w.close()
    timed = rows[1:] or rows
    figures = {
        "rollout_2workers_ratio": round(statistics.median(x["ratio"] for x in timed), 3),
        "rollout_1worker_s": round(statistics.median(x["one_worker_s"] for x in timed), 2),
        "rollout_2workers_s": round(statistics.median(x["two_workers_s"] for x in timed), 2),
        "goal_rollout_2workers_ratio": 1.8,
        "update_2nodes_ratio": round(statistics.median(x["ratio"] for x in updates), 3),
        "update_1node_s": round(statistics.median(x["one_node_s"] for x in updates), 2),
        "update_2nodes_s": round(statistics.median(x["two_nodes_s"] for x in updates), 2),
        "goal_update_2nodes_ratio": 1.6,
        "update_2nodes_step_ratio": _median([x["step_ratio"] for x in updates if x["step_ratio"] is not None]),
        "update_1node_loaded_s": round(statistics.median(x["one_node_loaded_s"] for x in updates), 2),
        "update_2nodes_ratio_loaded": round(statistics.median(x["loaded_ratio"] for x in updates), 3),
        "verify_1worker_s": verify["one_worker_s"],
        "verify_2workers_s": verify["two_workers_s"],
    }
    one_core = figures["rollout_1worker_s"] + figures["verify_1worker_s"] + figures["update_1node_s"]
    k2_n2 = figures["rollout_2workers_s"] + figures["verify_2workers_s"] + figures["update_2nodes_s"]
    figures |= {"iteration_1x1_s": round(one_core, 2), "iteration_2x2_s": round(k2_n2, 2)}
    figures["iteration_2x2_ratio"] = round(one_core / k2_n2, 3)
    write_result(
        args.out,
        figures,
        repeats=rows,
        verify=verify,
        update_repeats=updates,
        probes=probes,
        not_measured="the placed protocol's overhead (Prefect, heartbeats; bench/placed.py measures it); the iteration is "
        "its stages added up",
        versions={p: version(p) for p in ("torch", "transformers", "rlvr")},
        settings={k: str(v) for k, v in vars(args).items()},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
