"""rollout.shards: rollout(i), verify(i) and evaluate(i) in K parts, each a stage of its own, committed together (rlvr.stages.parts).

With the transformers engine every response depends only on its seed, so a run in K parts samples the
responses of the same run in one part, token for token. On workers, a part whose worker dies is
submitted again and taken by a worker that joined late, and the run equals, byte for byte, the same
run in as many parts in one process."""

from __future__ import annotations

import signal
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
from rlvr.views.status import status_rows
from tests.helpers.machines import PARITY, driver_command, machine, stop_all, worker_process

pytestmark = pytest.mark.slow
ROWS = "SELECT * FROM rollouts ORDER BY iteration, prompt_id, sample_idx"
UPDATE_COLS = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))  # but the wall clock


def _config(small_config: Config, shards: int, parity: Path, **placement: str) -> Config:
    data = small_config.model_dump()
    data["rollout"] |= {"prompts_per_iteration": 8, "shards": shards}
    data["eval"] |= {"every": 1, "prompts": 5}  # evaluate(0..2) in parts too
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]  # every group has signal
    data["placement"] = placement
    return Config.model_validate(data)


def _same_run(mine: str, theirs: str, iterations: int) -> None:
    """The same rollouts, scores and updates, row for row, and the same weights, byte for byte."""
    assert run_sql(mine, ROWS).to_pylist() == run_sql(theirs, ROWS).to_pylist()
    scores = "SELECT * FROM scores ORDER BY ALL"
    assert run_sql(mine, scores).to_pylist() == run_sql(theirs, scores).to_pylist()
    q = f"SELECT {UPDATE_COLS} FROM updates ORDER BY global_step"
    assert run_sql(mine, q).to_pylist() == run_sql(theirs, q).to_pylist()
    evals = "SELECT * FROM evals ORDER BY ALL"
    assert run_sql(mine, evals).to_pylist() == run_sql(theirs, evals).to_pylist()
    a, b = open_run(mine).paths.policy_dir(iterations), open_run(theirs).paths.policy_dir(iterations)
    assert file_sha256(a / "model.safetensors") == file_sha256(b / "model.safetensors")


def _same_responses(mine: str, theirs: str, iterations: int = 2) -> None:
    """The same responses, token for token, and the same scores. The logprobs agree to float32's last
    bits only: a part's batches hold other prompts, so the padded shapes, and with them the order of
    the sums inside a forward pass, differ."""
    a, b = run_sql(mine, ROWS).to_pylist(), run_sql(theirs, ROWS).to_pylist()
    drop = ("response_logprobs",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in a] == [
        {k: v for k, v in r.items() if k not in drop} for r in b
    ]
    for x, y in zip(a, b, strict=True):
        assert x["response_logprobs"] == pytest.approx(y["response_logprobs"], abs=1e-5)
    scores = "SELECT * FROM scores ORDER BY ALL"
    assert run_sql(mine, scores).to_pylist() == run_sql(theirs, scores).to_pylist()
    evals = "SELECT * FROM evals ORDER BY ALL"
    assert run_sql(mine, evals).to_pylist() == run_sql(theirs, evals).to_pylist()
    figures = ("problems", "accuracy", "pass_at_1", "reward_mean")
    for i in range(iterations + 1):
        a, b = (read_record(open_run(r).paths.record("evaluate", i)).extra for r in (mine, theirs))
        assert {k: a[k] for k in figures} == {k: b[k] for k in figures}


def test_a_run_in_three_parts_equals_one_in_one_part(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    from rlvr.flows.train import train

    parity = tmp_path / "parity.sql"
    parity.write_text(PARITY)
    one = create_or_open(tmp_path / "one", _config(small_config, 1, parity), 2)
    three = create_or_open(tmp_path / "three", _config(small_config, 3, parity), 2)
    train(str(one.paths.root))
    results = train(str(three.paths.root))
    _same_responses(str(three.paths.root), str(one.paths.root))

    paths = three.paths
    rec = read_record(paths.record("rollout", 1))
    parts = [p["stage"] for p in rec.extra["parts"]]
    assert parts == ["rollout.part-1-of-3", "rollout.part-2-of-3", "rollout.part-3-of-3"]
    assert [p["rows"] for p in rec.extra["parts"]] == [3 * 4, 3 * 4, 2 * 4]  # 8 prompts in 3 parts: 3, 3, 2; G = 4
    for k, name in enumerate(parts):  # each part committed its own folder; the stage lists them all
        own = read_record(paths.record(name, 1))
        assert own.outputs and all(o.path.startswith(f"rollouts/iteration=000001/part-{k + 1}-of-3/") for o in own.outputs)
        assert [o.path for o in own.outputs] == [
            o.path for o in rec.outputs if o.path.startswith(f"rollouts/iteration=000001/part-{k + 1}-of-3/")
        ]
    assert {r["stage"] for r in results} == {"prepare", "rollout", "verify", "update", "evaluate"}
    for stage, i in (("evaluate", 2), ("verify", 1)):
        assert [p["stage"] for p in read_record(paths.record(stage, i)).extra["parts"]] == [
            f"{stage}.part-{k}-of-3" for k in (1, 2, 3)
        ]
    shown = {(r["stage"], r["iteration"]): r for r in status_rows(str(paths.root))}
    assert "3 parts" in shown[("rollout", 1)]["note"]
    assert shown[("rollout", 1)]["seconds"] >= max(p["seconds"] for p in rec.extra["parts"])  # the slowest part's, and the commit
    assert all(r["skipped"] for r in train(str(paths.root))), "a second run of the flow skips every stage, parts too"


def test_parts_with_asynchronous_rollout_sample_what_one_part_samples(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    """rollout.max_staleness = 1: rollout(i) in parts samples v_{i-1} while update(i-1) trains, as one part does."""
    from rlvr.flows.train import train

    parity = tmp_path / "parity.sql"
    parity.write_text(PARITY)
    runs = {}
    for k in (1, 2):
        cfg = _config(small_config, k, parity).model_dump()
        cfg["rollout"]["max_staleness"] = 1
        runs[k] = create_or_open(tmp_path / f"k{k}", Config.model_validate(cfg), 3)
        train(str(runs[k].paths.root))
    _same_responses(str(runs[2].paths.root), str(runs[1].paths.root), iterations=3)
    versions = run_sql(str(runs[2].paths.root), "SELECT DISTINCT iteration, policy_version FROM rollouts ORDER BY 1").to_pylist()
    assert versions == [{"iteration": i, "policy_version": max(0, i - 1)} for i in range(3)]


def test_parts_whose_worker_dies_are_taken_by_a_worker_that_joined_late(
    tmp_path: Path, prefect_server: str, prefect_api: str, small_config: Config, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first worker stalls in whichever part of rollout 1 it takes; busy, it takes no other run (it listens
    only while its slot is free), so the other part waits in the queue. It is SIGKILLed there: its part is
    submitted again, and both go to a worker that joins late."""
    from rlvr.flows.train import train

    ref_home = machine(tmp_path, "reference")
    monkeypatch.chdir(ref_home)
    ref = create_or_open(ref_home / "run", _config(small_config, 2, Path("rewards/parity.sql")), 2)
    train(str(ref.paths.root))  # the same K, in this process

    driver_home, first_home, late_home = (machine(tmp_path, n) for n in ("driver", "first", "late"))
    (driver_home / "placed.toml").write_text(_config(small_config, 2, Path("rewards/parity.sql"), rollout="gen").to_toml())
    beat = {"RLVR_HEARTBEAT_SECONDS": "5"}
    args = ("--stages", "rollout", "--pool", "gen")
    stall = ",".join(f"rollout.part-{p}-of-2:1:before_rename:stall=600" for p in (1, 2))
    run = str(tmp_path / "placed-run")
    cmd, env = driver_command(driver_home, prefect_server, run, 2, beat)
    log_path = driver_home / "driver.log"
    procs = []
    try:
        first = worker_process(first_home, prefect_server, *args, "--name", "first", env={**beat, FAULT_ENV: stall})
        with log_path.open("w") as said:
            driver = subprocess.Popen(
                cmd, cwd=driver_home, env=env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True
            )
        procs += [first, driver]
        deadline = time.monotonic() + 600
        while "of-2 1: taken by worker first" not in log_path.read_text():  # it stalls in that part
            assert time.monotonic() < deadline and driver.poll() is None, log_path.read_text()[-4000:]
            time.sleep(0.5)
        time.sleep(3)  # time for a busy worker to take, or be sent, the other part, which it must not
        first.send_signal(signal.SIGKILL)
        late = worker_process(late_home, prefect_server, *args, "--name", "late", env=beat)
        procs.append(late)
        driver.wait(timeout=600)
    finally:
        stop_all(procs)
    log = log_path.read_text()
    assert driver.returncode == 0, log[-4000:]
    assert "without a flow run id" not in log, "the part threads log in the flow run's context, to the API"
    again = [p for p in (1, 2) if f"stopped its heartbeat for 5s; the driver submits rollout.part-{p}-of-2 1 again" in log]
    assert len(again) == 1, log[-4000:]  # the part it stalled in; the other one it never took
    _same_run(run, str(ref.paths.root), 2)
    paths = open_run(run).paths
    made = {i: {p["stage"]: p["worker"]["name"] for p in read_record(paths.record("rollout", i)).extra["parts"]} for i in (0, 1)}
    assert made == {
        0: dict.fromkeys(("rollout.part-1-of-2", "rollout.part-2-of-2"), "first"),
        1: dict.fromkeys(("rollout.part-1-of-2", "rollout.part-2-of-2"), "late"),
    }
