"""Benchmark: the run store on S3 against a local folder, the same run side by side.

    python bench/store.py                    # tiny recipe, 4 iterations a side, sql over 200k rows; ~10 min on 2 cores
    python bench/store.py --iterations 2 --sql-rows 50000 --repeats 1   # quicker

Starts moto's standalone S3 server on 127.0.0.1 (as the tests do; `pip install -e ".[dev]"`) and
points the standard AWS environment at it, then:
  - iteration: recipes/tiny-demo.toml (same seed) as two runs, one in a local folder and one at
    s3://.../tiny, their stages called in turn (local stage, then the same stage on S3), so load on
    the machine falls on both; per-iteration seconds (rollout + verify + update, + evaluate where
    the recipe evaluates), and the bytes this process sent to and read from S3 per iteration;
  - sql: 200k synthetic rollouts committed to both stores, then `rlvr sql` (a fresh process each
    time, as a user runs it) on the local run, on S3 with a cold cache (the shards downloaded) and on
    S3 with the cache warm, alternating; median seconds.
Prints `key: value` lines and writes them, with the machine and versions, to bench/results/store.json.
A local S3 server has no network latency: a real bucket adds its round trips (about 20-50 ms each
on AWS; an iteration makes a few dozen requests, see `requests_per_iteration`).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
import uuid
from importlib.metadata import version
from pathlib import Path

from machine import write_result  # bench/machine.py

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "store.json"
QUERY = "SELECT iteration, count(*) AS n, avg(num_response_tokens) AS tokens FROM rollouts GROUP BY 1 ORDER BY 1"


def start_s3(log: Path) -> subprocess.Popen:
    """moto's server on a free port of 127.0.0.1; the AWS environment pointed at it (this process and children)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log.open("w"), stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/moto-api/", timeout=2).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        raise RuntimeError(f"moto server did not start; see {log}")
    os.environ.update(AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1")
    return proc


def bench_iterations(local: Path, uri: str, iterations: int) -> dict:
    """Both runs of the tiny recipe, stage by stage in turn; per iteration: seconds a side, S3 traffic."""
    from rlvr.checks.start import create_or_open
    from rlvr.config import parse_config
    from rlvr.stages import evaluate, prepare, rollout, update, verify
    from rlvr.store.fs import TRAFFIC

    data = tomllib.loads((ROOT / "recipes" / "tiny-demo.toml").read_text())
    data["run"]["iterations"] = iterations
    cfg = parse_config(data, "recipes/tiny-demo.toml")
    stages = {"rollout": rollout, "verify": verify, "update": update, "evaluate": evaluate}
    for loc in (str(local), uri):
        create_or_open(loc, cfg, None)
        prepare(loc)
    rows = {i: {"local_s": 0.0, "s3_s": 0.0, "up": 0, "down": 0, "requests": 0} for i in range(iterations + 1)}
    for stage, i in cfg.stage_plan()[1:]:
        t = time.perf_counter()
        stages[stage](str(local), i)
        rows[i]["local_s"] += time.perf_counter() - t
        up, down, req, t = TRAFFIC.bytes_up, TRAFFIC.bytes_down, TRAFFIC.requests, time.perf_counter()
        stages[stage](uri, i)
        rows[i]["s3_s"] += time.perf_counter() - t
        rows[i]["up"] += TRAFFIC.bytes_up - up
        rows[i]["down"] += TRAFFIC.bytes_down - down
        rows[i]["requests"] += TRAFFIC.requests - req
    return {i: r for i, r in rows.items() if i < iterations}  # the last evaluate (of v_N) belongs to no iteration


def commit_rollouts(loc: str, rows: int, iterations: int) -> None:
    """`rows` synthetic rollouts over `iterations` committed shards (and one problem), through the protocol."""
    import random

    from rlvr.checks.start import create_or_open
    from rlvr.schema import PREPARE, PROBLEMS, ROLLOUT, ROLLOUTS, shard_name
    from rlvr.store.commit import begin_stage, write_table

    paths = create_or_open(loc, None, None).paths
    problem = {"prompt_id": "p0", "task": "arithmetic", "split": "train", "prompt": "1+1?", "answer": "2", "meta": "{}"}
    with begin_stage(paths, PREPARE, None, {"bench": 1}) as tx:
        write_table([problem], PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
        tx.commit(rows=1)
    rng = random.Random(0)
    per = rows // iterations
    for i in range(iterations):
        batch = [
            {
                "iteration": i,
                "prompt_id": f"p{k // 8}",
                "sample_idx": k % 8,
                "prompt_token_ids": [rng.randrange(500) for _ in range(24)],
                "response_token_ids": (ids := [rng.randrange(500) for _ in range(rng.randrange(8, 64))]),
                "response_logprobs": [-1.0] * len(ids),
                "response_text": "<answer>2</answer>" * (len(ids) // 8),
                "num_response_tokens": len(ids),
                "finish_reason": "stop",
                "policy_version": i,
                "staleness": 0,
                "engine": "transformers",
                "temperature": 1.0,
                "seed": k,
                "model": None,
            }
            for k in range(per)
        ]
        with begin_stage(paths, ROLLOUT, i, {"bench": i}) as tx:
            write_table(batch, ROLLOUTS, tx.output(paths.table_dir("rollouts", i)) / shard_name(0))
            tx.commit(rows=len(batch))


def sql_seconds(loc: str) -> float:
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "rlvr.flows.cli", "sql", loc, QUERY, "--format", "json"], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return time.perf_counter() - t


def bench_sql(local: Path, uri: str, rows: int, repeats: int) -> dict:
    from rlvr.store.records import read_record
    from rlvr.store.run import open_run
    from rlvr.store.workspace import object_path

    for loc in (str(local), uri):
        commit_rollouts(loc, rows, 10)
    paths = open_run(uri).paths
    shards = [o.sha256 for i in range(10) for o in read_record(paths.record("rollout", i)).outputs]
    times = {"local": [], "s3_cold": [], "s3_warm": []}
    for _ in range(repeats):
        times["local"].append(sql_seconds(str(local)))
        for sha in shards:  # another machine: nothing of this run cached
            object_path(sha).unlink(missing_ok=True)
        times["s3_cold"].append(sql_seconds(uri))
        times["s3_warm"].append(sql_seconds(uri))
    return {k: statistics.median(v) for k, v in times.items()} | {"all": times}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--sql-rows", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-store-") as tmp:
        server = start_s3(Path(tmp) / "moto.log")
        try:
            import s3fs

            bucket = f"bench-{uuid.uuid4().hex[:8]}"
            s3fs.S3FileSystem(skip_instance_cache=True).mkdir(bucket)
            its = bench_iterations(Path(tmp) / "tiny", f"s3://{bucket}/tiny", args.iterations)
            sql = bench_sql(Path(tmp) / "sql", f"s3://{bucket}/sql", args.sql_rows, args.repeats)
        finally:
            server.terminate()
    local_s, s3_s = [r["local_s"] for r in its.values()], [r["s3_s"] for r in its.values()]
    figures = {
        "iteration_local_s": round(statistics.median(local_s), 2),
        "iteration_s3_s": round(statistics.median(s3_s), 2),
        "iteration_ratio": round(sum(s3_s) / sum(local_s), 3),
        "bytes_up_per_iteration": round(statistics.mean(r["up"] for r in its.values())),
        "bytes_down_per_iteration": round(statistics.mean(r["down"] for r in its.values())),
        "requests_per_iteration": round(statistics.mean(r["requests"] for r in its.values()), 1),
        "sql_rows": args.sql_rows,
        "sql_local_s": round(sql["local"], 2),
        "sql_s3_cold_s": round(sql["s3_cold"], 2),
        "sql_s3_warm_s": round(sql["s3_warm"], 2),
        "sql_cold_ratio": round(sql["s3_cold"] / sql["local"], 3),
        "sql_warm_ratio": round(sql["s3_warm"] / sql["local"], 3),
    }
    write_result(
        args.out,
        figures,
        per_iteration=its,
        sql_all_s=sql["all"],
        versions={p: version(p) for p in ("s3fs", "botocore", "moto", "pyarrow", "duckdb")},
        settings=vars(args),
    )


if __name__ == "__main__":
    main()
