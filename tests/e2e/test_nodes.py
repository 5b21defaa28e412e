"""update.nnodes: the update on several workers at once (rlvr.tasks.gang), as several machines on one.

Two `rlvr worker` processes of the update's pool, each its own machine (folder, cache), share a Prefect
server and an S3 run store with the driver. One of them is lost in the middle of a step of update 1 (a
rank SIGKILLs its worker, torchrun and itself); the driver gives up on the gang, a worker that joins
late takes the lost node's place, every node starts again, and the run equals, byte for byte, a run
whose update has as many processes on one machine."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.files import file_sha256
from rlvr.schema import UPDATES
from rlvr.store.commit import FAULT_ENV
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from tests.helpers.machines import driver_command, machine, stop_all, worker_process

pytestmark = pytest.mark.slow
ITERATIONS = 3
UPDATE_COLS = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))  # but the machine's


def _config(small_config: Config, parity: Path, **update) -> Config:
    data = small_config.model_dump()
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]  # every group has signal
    data["update"] |= update
    data["placement"] = {"update": "train"} if update.get("nnodes", 1) > 1 else {}
    return Config.model_validate(data)


def test_an_update_on_two_nodes_loses_one_and_equals_two_processes_on_one_machine(
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
    ref = create_or_open(ref_home / "run", _config(small_config, parity, nproc=2), ITERATIONS)
    train(str(ref.paths.root))  # two processes on one machine

    driver_home, first_home, second_home, late_home = (machine(tmp_path, n) for n in ("driver", "first", "second", "late"))
    (driver_home / "placed.toml").write_text(_config(small_config, parity, nproc=1, nnodes=2).to_toml())
    beat = {"RLVR_HEARTBEAT_SECONDS": "10"}
    args = ("--stages", "update", "--pool", "train")
    cmd, env = driver_command(driver_home, prefect_server, s3_uri, ITERATIONS, beat)
    log_path = driver_home / "driver.log"
    procs = []
    try:
        lost = {FAULT_ENV: "update:1:mid_step:machine", **beat}  # in whichever node of update 1 it takes
        first = worker_process(first_home, prefect_server, *args, "--name", "first", env=lost)
        second = worker_process(second_home, prefect_server, *args, "--name", "second", env=beat)
        with log_path.open("w") as said:
            driver = subprocess.Popen(
                cmd, cwd=driver_home, env=env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True
            )
        procs += [first, second, driver]
        deadline = time.monotonic() + 900
        while first.poll() is None:
            assert time.monotonic() < deadline and driver.poll() is None, log_path.read_text()[-4000:]
            time.sleep(0.5)
        procs.append(worker_process(late_home, prefect_server, *args, "--name", "late", env=beat))
        driver.wait(timeout=900)
    finally:
        stop_all(procs)
    log = log_path.read_text()
    assert driver.returncode == 0, log[-4000:]
    assert "update 1: update.node-" in log and "all 2 nodes start again" in log, log[-4000:]

    # the bytes of two processes on one machine
    q = f"SELECT {UPDATE_COLS} FROM updates ORDER BY global_step"
    assert run_sql(s3_uri, q).to_pylist() == run_sql(str(ref.paths.root), q).to_pylist()
    assert {r["world_size"] for r in run_sql(s3_uri, "SELECT world_size FROM updates").to_pylist()} == {2}
    rows = "SELECT * FROM rollouts ORDER BY iteration, prompt_id, sample_idx"
    assert run_sql(s3_uri, rows).to_pylist() == run_sql(str(ref.paths.root), rows).to_pylist()
    mine, theirs = open_run(s3_uri), open_run(str(ref.paths.root))
    from rlvr.store.commit import fetch_policy

    fetch_policy(mine.paths, ITERATIONS)
    a, b = mine.paths.policy_dir(ITERATIONS), theirs.paths.policy_dir(ITERATIONS)
    assert file_sha256(a / "model.safetensors") == file_sha256(b / "model.safetensors")
    # node 1 (global rank 0) committed each update; update 1's after the loss, by a worker still alive
    made = [read_record(mine.paths.record("update", i)).worker["name"] for i in range(ITERATIONS)]
    assert made[0] in ("first", "second") and made[1] in ("second", "late") and made[2] in ("second", "late"), made
