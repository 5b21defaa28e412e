"""Machines lost mid-stage on both lanes: rollout and verify in parts (rollout.shards) on a pool of three
workers, the update on two nodes (update.nnodes, rlvr.tasks.gang) on a pool of two, several machines on one.

Every `rlvr worker` is a machine of its own (folder, cache); all share a Prefect server and an S3 run
store with the driver. Each rollout worker is slow in the part of rollout 1 it takes, so each takes one;
one of them is SIGKILLed there, in the middle of its part: the driver submits that part again, and a
rollout worker that joins late, the only one free, takes it. One update node is lost in the middle of a
step of update 1 (a rank SIGKILLs its worker, torchrun and itself): the driver gives up on the gang, an
update worker that joins late takes the lost node's place, and every node starts again. The run equals,
byte for byte, an unkilled run in this process with as many parts and an update with as many processes
on one machine."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.files import file_sha256
from rlvr.schema import UPDATES
from rlvr.store.commit import FAULT_ENV, fetch_policy
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from tests.helpers.machines import driver_command, machine, stop_all, worker_process

pytestmark = pytest.mark.slow
ITERATIONS = 3
PARTS = 3  # K = rollout.shards: rollout(i) and verify(i) in 3 parts each
SLOW_S = 40  # gen-b's and gen-c's stall in their part of rollout 1: the late worker starts meanwhile (5-15 s)
UPDATE_COLS = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))  # but the machine's


def _config(small_config: Config, parity: Path, placement: dict[str, str], **update) -> Config:
    data = small_config.model_dump()
    data["rollout"]["shards"] = PARTS
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]  # every group has signal
    data["update"] |= update
    data["placement"] = placement
    return Config.model_validate(data)


def test_workers_lost_mid_part_and_mid_step_end_as_an_unkilled_run(
    tmp_path: Path,
    prefect_server: str,
    prefect_api: str,
    s3_uri: str,
    small_config: Config,
    tiny_model: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rlvr.flows.train import train

    parity = Path("rewards/parity.sql")  # each machine's own copy, at the same relative path
    ref_home = machine(tmp_path, "reference")
    monkeypatch.chdir(ref_home)
    ref = create_or_open(ref_home / "run", _config(small_config, parity, {}, nproc=2), ITERATIONS)
    train(str(ref.paths.root))  # the same K, and two update processes on one machine

    homes = {
        n: machine(tmp_path, n) for n in ("driver", "gen-a", "gen-b", "gen-c", "gen-late", "train-a", "train-b", "train-late")
    }
    placed = {"rollout": "gen", "verify": "gen", "update": "train"}
    (homes["driver"] / "placed.toml").write_text(_config(small_config, parity, placed, nproc=1, nnodes=2).to_toml())
    beat = {"RLVR_HEARTBEAT_SECONDS": "10"}
    gen, train_ = ("--stages", "rollout,verify", "--pool", "gen"), ("--stages", "update", "--pool", "train")

    def worker(name: str, args: tuple[str, ...], **env: str) -> subprocess.Popen:
        return worker_process(homes[name], prefect_server, *args, "--name", name, env={**beat, **env})

    # every rollout worker stalls in whichever part of rollout 1 it takes (so each takes one): gen-a until it is
    # killed, the others long enough for the late one to start; train-a is lost in whichever node of update 1 it takes
    def stall(s: int) -> dict[str, str]:
        return {FAULT_ENV: ",".join(f"rollout.part-{p}-of-{PARTS}:1:before_rename:stall={s}" for p in range(1, PARTS + 1))}

    cmd, env = driver_command(homes["driver"], prefect_server, s3_uri, ITERATIONS, beat)
    log_path = homes["driver"] / "driver.log"
    procs = []
    try:
        stalled = worker("gen-a", gen, **stall(600))
        lost = worker("train-a", train_, **{FAULT_ENV: "update:1:mid_step:machine"})
        procs += [stalled, worker("gen-b", gen, **stall(SLOW_S)), worker("gen-c", gen, **stall(SLOW_S))]
        procs += [lost, worker("train-b", train_)]
        with log_path.open("w") as said:
            driver = subprocess.Popen(
                cmd, cwd=homes["driver"], env=env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True
            )
        procs.append(driver)
        deadline = time.monotonic() + 900

        def wait_until(done) -> None:
            while not done():
                assert time.monotonic() < deadline and driver.poll() is None, log_path.read_text()[-4000:]
                time.sleep(0.5)

        taken = re.compile(rf"rollout\.part-\d-of-{PARTS} 1: taken by worker (\S+) ")
        wait_until(lambda: set(taken.findall(log_path.read_text())) == {"gen-a", "gen-b", "gen-c"})  # a part each
        sampled = re.compile(r"rollout 1: \d+ responses \(")  # and gen-a has sampled its part, not committed it
        wait_until(lambda: sampled.search("".join(f.read_text() for f in homes["gen-a"].glob("worker-*.log"))))
        stalled.send_signal(signal.SIGKILL)
        procs.append(worker("gen-late", gen))
        wait_until(lambda: lost.poll() is not None)  # the machine of a node of update 1 is gone
        procs.append(worker("train-late", train_))
        driver.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        stop_all(procs)
    log = log_path.read_text()
    assert driver.returncode == 0, log[-4000:]
    names = [f"rollout.part-{p}-of-{PARTS}" for p in range(1, PARTS + 1)]
    again = [n for n in names if f"stopped its heartbeat for 10s; the driver submits {n} 1 again" in log]
    assert len(again) == 1, log[-4000:]  # the part gen-a was killed in, and no other
    assert "update 1: update.node-" in log and "all 2 nodes start again" in log, log[-4000:]

    # the bytes of the unkilled run
    mine, theirs = s3_uri, str(ref.paths.root)
    rows = "SELECT * FROM rollouts ORDER BY iteration, prompt_id, sample_idx"
    assert run_sql(mine, rows).to_pylist() == run_sql(theirs, rows).to_pylist()
    scores = "SELECT * FROM scores ORDER BY ALL"
    assert run_sql(mine, scores).to_pylist() == run_sql(theirs, scores).to_pylist()
    q = f"SELECT {UPDATE_COLS} FROM updates ORDER BY global_step"
    assert run_sql(mine, q).to_pylist() == run_sql(theirs, q).to_pylist()
    assert {r["world_size"] for r in run_sql(mine, "SELECT world_size FROM updates").to_pylist()} == {2}
    paths = open_run(mine).paths
    fetch_policy(paths, ITERATIONS)
    a, b = paths.policy_dir(ITERATIONS), ref.paths.policy_dir(ITERATIONS)
    assert file_sha256(a / "model.safetensors") == file_sha256(b / "model.safetensors")

    # who made what: node 1 (global rank 0) committed each update, update 1's after the loss by a worker still
    # alive; the part of rollout 1 that gen-a was killed in was made by the rollout worker that joined late
    made = [read_record(paths.record("update", i)).worker["name"] for i in range(ITERATIONS)]
    assert made[0] in ("train-a", "train-b") and set(made[1:]) <= {"train-b", "train-late"}, made
    parts = {
        (s, i): {p["stage"]: p["worker"]["name"] for p in read_record(paths.record(s, i)).extra["parts"]}
        for s in ("rollout", "verify")
        for i in range(ITERATIONS)
    }
    assert all(len(made) == PARTS for made in parts.values()), parts
    assert parts["rollout", 1][again[0]] == "gen-late", parts  # the part gen-a was killed in: the late worker's
    assert sorted(parts["rollout", 1].values()) == ["gen-b", "gen-c", "gen-late"], parts
    assert "gen-a" not in [w for k in (("rollout", 2), ("verify", 1), ("verify", 2)) for w in parts[k].values()], parts
