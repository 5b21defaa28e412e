"""Stages placed on `rlvr worker` processes ([placement], rlvr.tasks.placed), tested as several machines on one.

The end-to-end test starts a real `prefect server start` on 127.0.0.1, uses moto's S3 server (the run
store), and two `rlvr worker` processes with their own working directories, caches and PREFECT_HOMEs:
one for rollout, verify and evaluate (pool gen), one for update (pool train). Nothing but the store and
the Prefect API is shared (a reward plug-in is a relative path each machine holds its own copy of).
The rollout worker SIGKILLs itself in the middle of rollout 1's upload; the driver notices the missing
heartbeat, the worker is started again, and the run finishes byte-identical to an unplaced run of the
same seed. A second driver is refused while the first holds the run. About 2-3 minutes on 2 cores.

    pytest tests/e2e/test_workers.py -x -q
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config, ConfigError
from rlvr.schema import UPDATES
from rlvr.store.commit import FAULT_ENV
from rlvr.store.integrity import orphans
from rlvr.store.records import CommitRecord, read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from rlvr.views.status import status_rows
from tests.helpers.cli import run_cli
from tests.helpers.machines import driver_command, free_port, machine, start_prefect_server, stop_all, worker_process


def test_placement_changes_neither_the_hash_nor_a_run_and_may_change_on_a_live_run(tmp_path: Path, tiny_model: Path) -> None:
    cfg = Config.model_validate({"rollout": {"engine": "transformers"}})
    placed = Config.model_validate({**cfg.model_dump(), "placement": {"rollout": "gpu", "update": "train"}})
    assert placed.hash() == cfg.hash() and placed.placement.placed() == {"rollout": "gpu", "update": "train"}
    assert cfg.placement.placed() == {} and all(cfg.placement.pool(s) is None for s in ("prepare", "rollout", "update"))
    run = create_or_open(tmp_path / "run", cfg, 1)
    moved = create_or_open(tmp_path / "run", placed, None)  # an existing run moves its stages: not "another config"
    assert moved.config.placement.pool("update") == "train" and moved.config_hash == run.config_hash
    with pytest.raises(ValueError, match="pool name 'a b': use letters"):
        Config.model_validate({"placement": {"rollout": "a b"}})
    with pytest.raises(ValueError, match="placement.rollot"):
        Config.model_validate({"placement": {"rollot": "gpu"}})


def test_records_name_their_worker_only_when_one_made_them() -> None:
    from rlvr.store.commit import made_by

    base = {"stage": "rollout", "iteration": 1, "fingerprint": "f", "inputs": {}, "outputs": [], "rows": 0}
    rec = CommitRecord(**base, seconds=0.0, created_at="t")
    assert "worker" not in json.loads(rec.model_dump_json()), "a driver's record is byte for byte what it was"
    old = CommitRecord.model_validate_json(json.dumps({**base, "seconds": 1.0, "created_at": "t", "extra": {}}))
    assert old.worker is None  # records written before workers existed still read
    with made_by({"host": "h", "name": "w", "pid": 7}):
        from rlvr.store.commit import _MADE_BY

        assert _MADE_BY.get() == {"host": "h", "name": "w", "pid": 7}
    assert _MADE_BY.get() is None


def test_the_request_rides_in_tags_and_the_task_key_is_fixed() -> None:
    from rlvr.tasks.placed import StageRequest, placed_task, task_key

    for req in (StageRequest("s3://b/runs/x", "rollout", 3, "ab12"), StageRequest("/abs/run", "prepare", None, "cd34")):
        assert StageRequest.from_tags(["other", *req.tags()]) == req
    assert StageRequest.from_tags(["rlvr-run:/r", "rlvr-stage:update"]).code == ""  # a driver that sent none
    task = placed_task("rollout", "gpu", {"host": "h", "name": "w", "pid": 1})
    # the key a worker subscribes to and the driver submits to: no code hash, no file path in it
    assert task.task_key == task_key("rollout", "gpu") == "rlvr.placed.rollout@gpu"
    assert task.with_options(tags=["x"]).task_key == task.task_key  # a worker's and a submission's copies
    assert placed_task("rollout", "cpu").task_key != task.task_key


def test_the_code_digest_is_the_layout_independent_digest_of_code_files(tmp_path: Path) -> None:
    from rlvr.files import code_digest

    checkout, wheel = tmp_path / "checkout", tmp_path / "site"
    for folder, text in ((checkout / "rlvr", "x = 1\n"), (checkout / "tasks", "y = 2\n"), (wheel / "rlvr", "x = 1\n")):
        folder.mkdir(parents=True)
        (folder / "a.py").write_text(text)
    (wheel / "rlvr" / "tasks").mkdir()
    (wheel / "rlvr" / "tasks" / "a.py").write_text("y = 2\n")
    (checkout / "rlvr" / "q.sql").write_text("SELECT 1")
    (wheel / "rlvr" / "q.sql").write_text("SELECT 1")
    here = code_digest({"rlvr": checkout / "rlvr", "rlvr.tasks": checkout / "tasks"})
    # an installed wheel nests rlvr/tasks inside rlvr/; a checkout keeps tasks/ beside it: one digest
    assert code_digest({"rlvr": wheel / "rlvr", "rlvr.tasks": wheel / "rlvr" / "tasks"}) == here
    (checkout / "rlvr" / "__pycache__").mkdir()
    (checkout / "rlvr" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0" * 8)
    (checkout / "rlvr" / "notes.txt").write_text("not code")
    assert code_digest({"rlvr": checkout / "rlvr", "rlvr.tasks": checkout / "tasks"}) == here
    (checkout / "tasks" / "a.py").write_text("y = 3\n")  # one byte of one file
    assert code_digest({"rlvr": checkout / "rlvr", "rlvr.tasks": checkout / "tasks"}) != here
    (checkout / "tasks" / "a.py").write_text("y = 2\n")
    (checkout / "tasks" / "b.py").write_text("")  # a file more, even an empty one
    assert code_digest({"rlvr": checkout / "rlvr", "rlvr.tasks": checkout / "tasks"}) != here


def test_a_worker_refuses_a_request_from_other_code() -> None:
    from rlvr.tasks.placed import PlacedStageError, StageRequest

    from rlvr.files import code_fingerprint

    me = {"host": "h", "name": "w", "pid": 1}
    StageRequest("/r", "rollout", 2, code_fingerprint()).check_code(me)  # the same rlvr: taken
    with pytest.raises(
        PlacedStageError,
        match=rf"rollout 2 of /r: the driver runs rlvr with code 0123456789abcdef, this worker \(w on h\) runs code {code_fingerprint()}; install the same rlvr",
    ):
        StageRequest("/r", "rollout", 2, "0123456789abcdef").check_code(me)
    with pytest.raises(PlacedStageError, match=r"no code fingerprint \(an older rlvr\)"):
        StageRequest("/r", "update", 0).check_code(me)


@pytest.mark.parametrize(
    ("run", "allow", "taken"),
    [
        ("s3://b/runs/exp1", (), True),
        ("s3://b/runs/exp1", ("s3://b/runs",), True),
        ("s3://b/runs/exp1", ("s3://b/runs/exp1",), True),
        ("s3://b/runs-2/exp1", ("s3://b/runs",), False),
        ("s3://b/runs/../other/exp1", ("s3://b/runs",), False),
        ("s3://c/runs/exp1", ("s3://b/runs",), False),
        ("/data/runs/exp1", ("s3://b/runs", "/data/runs"), True),
        ("/data/runs/../secret", ("/data/runs",), False),
        ("/data/runs", ("/data/runs/exp1",), False),
    ],
    ids=["no-allow", "under", "equal", "sibling-prefix", "dot-dot-s3", "other-bucket", "local-under", "dot-dot-local", "above"],
)
def test_a_worker_serves_only_the_locations_it_allows(run: str, allow: tuple[str, ...], taken: bool) -> None:
    from rlvr.tasks.placed import PlacedStageError, StageRequest

    req, me = StageRequest(run, "rollout", 1), {"host": "h", "name": "w", "pid": 1}
    if taken:
        req.check_allowed(me, allow)
    else:
        with pytest.raises(
            PlacedStageError, match=r"rollout 1 of .*: this worker \(w on h\) serves runs under .* only \(its --allow\)"
        ):
            req.check_allowed(me, allow)


def test_rlvr_device_overrides_update_device_on_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from rlvr.models.load import DEVICE_ENV, resolve_device

    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert resolve_device("cuda") == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(ConfigError, match="RLVR_DEVICE='tpu': use auto, cpu or cuda"):
        resolve_device("cpu")
    if not torch.cuda.is_available():
        monkeypatch.setenv(DEVICE_ENV, "cuda")
        with pytest.raises(ConfigError, match='RLVR_DEVICE = "cuda" but torch.cuda.is_available'):
            resolve_device("cpu")


def test_worker_refuses_bad_stages_and_an_unreachable_api(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(tmp_path / "ph")}
    bad = run_cli("worker", "--stages", "rollout,train", env=env)
    assert bad.returncode == 2 and "--stages: unknown stage(s) 'train'; choose from prepare, rollout" in bad.stderr
    none = run_cli("worker", "--stages", "rollout", env=env)
    assert none.returncode == 2 and "PREFECT_API_URL is not set" in none.stderr and "prefect server start" in none.stderr
    down = run_cli("worker", "--stages", "update", env={**env, "PREFECT_API_URL": "http://127.0.0.1:9/api"})
    assert down.returncode == 2 and "no Prefect server answers at PREFECT_API_URL=http://127.0.0.1:9/api" in down.stderr


def test_a_placed_run_without_a_prefect_server_is_refused(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    cfg = tmp_path / "placed.toml"
    cfg.write_text(Config.model_validate({**small_config.model_dump(), "placement": {"update": "gpu"}}).to_toml())
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(tmp_path / "ph")}
    res = run_cli("train", str(cfg), "--run", str(tmp_path / "run"), env=env)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "[placement] sends update to pool 'gpu'; the workers take them from a Prefect server" in res.stderr


# ---- several machines on one ---------------------------------------------------------------------------------


def _reference_and_placed(tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch, pool: str, *homes: str):
    """The reference: `config` with 8 prompts an iteration, 2 iterations, trained here unplaced. Then the same
    run with rollout, verify and update placed on `pool`, written as placed.toml into the driver's folder.
    Returns (the reference run, the driver's folder, the folders `homes` names)."""
    data = config.model_dump()
    data["rollout"]["prompts_per_iteration"] = 8
    ref_home = machine(tmp_path, "reference")
    monkeypatch.chdir(ref_home)
    ref = create_or_open(ref_home / "run", Config.model_validate(data), 2)
    _train_here(ref.paths.root)
    data["placement"] = dict.fromkeys(("rollout", "verify", "update"), pool)
    driver_home = machine(tmp_path, "driver")
    (driver_home / "placed.toml").write_text(Config.model_validate(data).to_toml())
    return ref, driver_home, *(machine(tmp_path, h) for h in homes)


def _equals_unplaced(location: str, ref) -> None:
    """The run at `location` has the reference run's files, byte for byte, but for the wall-clock columns of
    its updates shards (equal too when they happen to round alike), which the SQL below compares without."""
    plan = ref.config.stage_plan()
    mine, theirs = _outputs(location, plan), _outputs(str(ref.paths.root), plan)
    assert [[p for p, _ in mine[k]] for k in plan] == [[p for p, _ in theirs[k]] for k in plan]
    differ = {p for k in plan for (p, a), (_, b) in zip(mine[k], theirs[k], strict=True) if a != b}
    assert all(p.startswith("updates/") for p in differ), sorted(differ)
    cols = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))
    for q in (f"SELECT {cols} FROM updates ORDER BY iteration, global_step", "SELECT * FROM scores ORDER BY ALL"):
        assert run_sql(location, q).to_pylist() == run_sql(str(ref.paths.root), q).to_pylist()


def _outputs(location: str, plan: list[tuple]) -> dict[tuple, list[tuple[str, str]]]:
    paths = open_run(location).paths
    return {k: [(o.path, o.sha256) for o in read_record(paths.record(*k)).outputs] for k in plan}


def _train_here(run_dir: Path) -> None:
    """The unplaced reference: every stage of the plan, in this process (no Prefect)."""
    from rlvr import stages

    for stage, i in open_run(run_dir).config.stage_plan():
        stages.prepare(run_dir) if i is None else getattr(stages, stage)(run_dir, i)


@pytest.mark.slow
def test_two_workers_train_a_run_survive_a_killed_worker_and_equal_an_unplaced_run(
    tmp_path: Path,
    prefect_server: str,
    small_config: Config,
    tiny_model: Path,
    s3_uri: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = small_config.model_dump()
    data["rollout"]["prompts_per_iteration"] = 8
    data["eval"] |= {"every": 3, "prompts": 8}
    data["verify"]["rewards"] = [{"name": "parity", "sql": "rewards/parity.sql", "weight": 1.0}]  # each machine's copy
    ref_home = machine(tmp_path, "reference")
    monkeypatch.chdir(ref_home)
    ref = create_or_open(ref_home / "run", Config.model_validate(data), 3)
    _train_here(ref.paths.root)

    data["placement"] = {"rollout": "gen", "verify": "gen", "evaluate": "gen", "update": "train"}
    driver_home, gen_home, train_home = (machine(tmp_path, n) for n in ("driver", "gen", "train"))
    (driver_home / "placed.toml").write_text(Config.model_validate(data).to_toml())
    beat = {"RLVR_HEARTBEAT_SECONDS": "5"}
    gen_args = ("--stages", "rollout,evaluate,verify", "--pool", "gen", "--name", "gen-worker")
    driver_env = {**os.environ, **beat, "PREFECT_API_URL": prefect_server, "PREFECT_HOME": str(driver_home / "prefect")}
    driver_env["COLUMNS"] = "200"
    cmd = [sys.executable, "-m", "rlvr.flows.cli", "train", "placed.toml", "--run", s3_uri, "--iterations", "3"]
    said = (driver_home / "driver.log").open("w+")
    procs = []
    try:
        gen = worker_process(gen_home, prefect_server, *gen_args, env={**beat, FAULT_ENV: "rollout:1:mid_upload"})
        trainer = worker_process(
            train_home, prefect_server, "--stages", "update", "--pool", "train", "--name", "train-worker", env=beat
        )
        driver = subprocess.Popen(
            cmd, cwd=driver_home, env=driver_env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True
        )
        procs += [gen, trainer, driver]
        assert gen.wait(timeout=600) == -9, "the rollout worker SIGKILLed itself in the middle of rollout 1's upload"
        restarted = worker_process(gen_home, prefect_server, *gen_args, env=beat)  # started again, without the fault
        procs.append(restarted)
        assert orphans(s3_uri), "it died with part of rollout 1 uploaded"
        second = run_cli("train", "--run", s3_uri, "--iterations", "3", env=driver_env)
        assert second.returncode == 2 and f"another rlvr process (pid {driver.pid} on" in second.stderr, second.stderr
        driver.wait(timeout=600)
        trainer.send_signal(signal.SIGINT)  # Ctrl-C on an idle worker: it stops at once
        assert trainer.wait(timeout=30) == 130
    finally:
        stop_all(procs)
    said.seek(0)
    errs = said.read()
    assert driver.returncode == 0, errs[-4000:]
    assert "gen-worker" in errs and "stopped its heartbeat for 5s; the driver submits rollout 1 again" in errs, errs[-4000:]

    plan = ref.config.stage_plan()
    mine, theirs = _outputs(s3_uri, plan), _outputs(str(ref.paths.root), plan)
    assert [[p for p, _ in mine[k]] for k in plan] == [[p for p, _ in theirs[k]] for k in plan]
    differ = sorted(p for k in plan for (p, a), (_, b) in zip(mine[k], theirs[k], strict=True) if a != b)
    assert differ == [f"updates/iteration={i:06d}/part-000000.parquet" for i in range(3)], differ  # wall-clock columns
    cols = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))
    for q in (f"SELECT {cols} FROM updates ORDER BY global_step", "SELECT * FROM scores ORDER BY ALL"):
        assert run_sql(s3_uri, q).to_pylist() == run_sql(str(ref.paths.root), q).to_pylist()
    groups = run_sql(s3_uri, "SELECT min(groups_used) AS g FROM updates").to_pylist()
    assert groups[0]["g"] > 0, "every update learned from groups with reward variance (the parity reward)"
    assert orphans(s3_uri) == [], "the next attempt at rollout 1 swept the killed one's uploads"

    paths = open_run(s3_uri).paths
    made = {k: read_record(paths.record(*k)).worker for k in plan}
    assert made[("prepare", None)] is None  # the driver ran it
    for (stage, _), who in made.items():
        if stage != "prepare":
            assert who["name"] == ("train-worker" if stage == "update" else "gen-worker") and who["host"] == socket.gethostname()
    assert made[("rollout", 1)]["pid"] == restarted.pid and made[("rollout", 0)]["pid"] == gen.pid
    assert made[("update", 0)]["pid"] == trainer.pid
    notes = {(r["stage"], r["iteration"]): r["note"] for r in status_rows(s3_uri)}
    assert notes[("rollout", 1)].endswith(f"; by gen-worker on {socket.gethostname()}") and "; by" not in notes[("prepare", "")]
    logs = "".join(f.read_text() for f in sorted(gen_home.glob("worker-*.log")))
    assert "Task run 'rollout-1@gen'" in logs and "Task run 'evaluate-3@gen'" in logs  # task runs named by stage, iteration, pool


@pytest.mark.slow
def test_two_workers_train_an_async_run_that_equals_an_unplaced_one(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rollout.max_staleness = 1 with rollout and verify on one worker and update on another: the
    overlapped stages run as placed tasks, each samples the version its plan names, and the run's
    bytes equal an unplaced run of the same config (a local run folder both workers see at the same
    absolute path, as docs/guide/workers.md allows)."""
    data = small_config.model_dump()
    data["rollout"] |= {"prompts_per_iteration": 8, "max_staleness": 1}
    data["eval"] |= {"every": 3, "prompts": 8}
    data["verify"]["rewards"] = [{"name": "parity", "sql": "rewards/parity.sql", "weight": 1.0}]
    ref_home = machine(tmp_path, "reference")
    monkeypatch.chdir(ref_home)
    ref = create_or_open(ref_home / "run", Config.model_validate(data), 3)
    _train_here(ref.paths.root)

    data["placement"] = {"rollout": "gen", "verify": "gen", "evaluate": "gen", "update": "train"}
    driver_home, gen_home, train_home = (machine(tmp_path, n) for n in ("driver", "gen", "train"))
    (driver_home / "placed.toml").write_text(Config.model_validate(data).to_toml())
    run = tmp_path / "store" / "run"
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "PREFECT_HOME": str(driver_home / "prefect"), "COLUMNS": "200"}
    workers = [
        worker_process(gen_home, prefect_server, "--stages", "rollout,verify,evaluate", "--pool", "gen", "--name", "gen-worker"),
        worker_process(train_home, prefect_server, "--stages", "update", "--pool", "train", "--name", "train-worker"),
    ]
    try:
        cmd = [sys.executable, "-m", "rlvr.flows.cli", "train", "placed.toml", "--run", str(run), "--iterations", "3"]
        driver = subprocess.run(cmd, cwd=driver_home, env=env, capture_output=True, text=True, timeout=900)
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=30)
    assert driver.returncode == 0, (driver.stdout + driver.stderr)[-4000:]

    plan = ref.config.stage_plan()
    assert plan.index(("rollout", 1)) < plan.index(("update", 0)), "k = 1: rollout(1) does not wait for update(0)"
    mine, theirs = _outputs(str(run), plan), _outputs(str(ref.paths.root), plan)
    differ = sorted(p for k in plan for (p, a), (_, b) in zip(mine[k], theirs[k], strict=True) if a != b)
    assert differ == [f"updates/iteration={i:06d}/part-000000.parquet" for i in range(3)], differ  # wall-clock columns
    versions = "SELECT iteration, min(policy_version) AS v, max(staleness) AS s FROM rollouts GROUP BY 1 ORDER BY 1"
    assert run_sql(run, versions).to_pylist() == [
        {"iteration": 0, "v": 0, "s": 0},
        {"iteration": 1, "v": 0, "s": 1},
        {"iteration": 2, "v": 1, "s": 1},
    ]
    made = {k: read_record(open_run(run).paths.record(*k)).worker for k in plan if k[0] != "prepare"}
    assert {k: w["name"] for k, w in made.items()} == {k: "train-worker" if k[0] == "update" else "gen-worker" for k in made}


@pytest.mark.slow
def test_a_worker_refuses_a_run_outside_its_allow_list_and_the_driver_says_why(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path
) -> None:
    data = small_config.model_dump() | {"placement": {"rollout": "fenced"}}
    driver_home, worker_home = machine(tmp_path, "driver"), machine(tmp_path, "worker")
    (driver_home / "placed.toml").write_text(Config.model_validate(data).to_toml())
    allowed = tmp_path / "allowed"
    worker = worker_process(
        worker_home, prefect_server, "--stages", "rollout", "--pool", "fenced", "--name", "fenced", "--allow", str(allowed)
    )
    cmd, env = driver_command(driver_home, prefect_server, str(tmp_path / "run"), 1)
    try:
        driver = subprocess.run(cmd, cwd=driver_home, env=env, capture_output=True, text=True, timeout=600)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    said = driver.stdout + driver.stderr
    assert driver.returncode != 0, said[-3000:]
    assert f"serves runs under {allowed} only (its --allow)" in said, said[-3000:]
    assert not open_run(tmp_path / "run").paths.record("rollout", 0).exists(), "the refused stage committed nothing"


def _other_rlvr(dest: Path) -> Path:
    """A copy of this rlvr laid out as an installed wheel, with one comment more: another rlvr's code."""
    import shutil

    from rlvr.files import code_roots

    for name, src in code_roots().items():
        shutil.copytree(src, dest / name.replace(".", "/"), ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    with (dest / "rlvr" / "tasks" / "placed.py").open("a") as f:
        f.write("# another rlvr\n")
    return dest


@pytest.mark.slow
def test_a_worker_running_other_code_refuses_the_stage_and_the_driver_says_why(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path
) -> None:
    from rlvr.files import code_fingerprint

    data = small_config.model_dump() | {"placement": {"rollout": "elsewhere"}}
    driver_home, other_home = machine(tmp_path, "driver"), machine(tmp_path, "other")
    (driver_home / "placed.toml").write_text(Config.model_validate(data).to_toml())
    code = {"PYTHONPATH": str(_other_rlvr(tmp_path / "other-rlvr"))}
    worker = worker_process(other_home, prefect_server, "--stages", "rollout", "--pool", "elsewhere", "--name", "old", env=code)
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "PREFECT_HOME": str(driver_home / "prefect"), "COLUMNS": "200"}
    try:
        cmd = [
            sys.executable,
            "-m",
            "rlvr.flows.cli",
            "train",
            "placed.toml",
            "--run",
            str(tmp_path / "run"),
            "--iterations",
            "1",
        ]
        driver = subprocess.run(cmd, cwd=driver_home, env=env, capture_output=True, text=True, timeout=600)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    said = driver.stdout + driver.stderr
    logs = "".join(f.read_text() for f in other_home.glob("worker-*.log"))
    theirs = logs.split("rlvr code ", 1)[1][:16]
    assert theirs != code_fingerprint(), "the worker ran the copy, whose code differs by a comment"
    assert driver.returncode != 0, said[-3000:]
    assert (
        f"the driver runs rlvr with code {code_fingerprint()}, this worker (old on {socket.gethostname()}) runs code {theirs}"
        in said
    ), said[-3000:]
    assert not open_run(tmp_path / "run").paths.record("rollout", 0).exists(), "nothing was committed by the other code"


@pytest.mark.slow
@pytest.mark.parametrize(("down_s", "bound_s"), [(15, 120), (30, 10)], ids=["driver-waits", "driver-stops-then-resume"])
def test_a_prefect_server_restart_in_a_placed_run_loses_nothing(
    tmp_path: Path, small_config: Config, tiny_model: Path, s3_uri: str, monkeypatch: pytest.MonkeyPatch, down_s, bound_s
) -> None:
    """The Prefect server is stopped while rollout 1 runs on its worker, and started again on the same
    port and database `down_s` later. Within the driver's bound (RLVR_API_OUTAGE_SECONDS) it goes on once
    the server is back; past it, it stops saying so and `rlvr resume` finishes. The worker is not taken
    for dead, and the run equals an unplaced one."""
    ref, driver_home, gen_home, server_home = _reference_and_placed(tmp_path, small_config, monkeypatch, "gen", "gen", "server")
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    beat = {"RLVR_HEARTBEAT_SECONDS": "10", "RLVR_API_OUTAGE_SECONDS": str(bound_s)}
    # Prefect's client retries a refused connection itself for up to a minute before the driver's bound
    # counts; the worker keeps its retries, which also ride out a busy server's 503s
    no_retry = {"PREFECT_CLIENT_MAX_RETRIES": "0"} if bound_s < down_s else {}
    cmd, driver_env = driver_command(driver_home, api, s3_uri, 2, beat | no_retry)
    said = (driver_home / "driver.log").open("w+")
    server = start_prefect_server(server_home, port)
    procs = [server]
    try:
        stall = {FAULT_ENV: "rollout:1:before_record:stall=25"}  # the outage lands while rollout 1 runs
        gen = worker_process(
            gen_home, api, "--stages", "rollout,verify,update", "--pool", "gen", "--name", "gen", env=beat | stall
        )
        driver = subprocess.Popen(
            cmd, cwd=driver_home, env=driver_env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True
        )
        procs += [gen, driver]
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and "rollout 1: taken by worker" not in (driver_home / "driver.log").read_text():
            time.sleep(0.2)
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
        time.sleep(down_s)
        procs.append(start_prefect_server(server_home, port))
        code = driver.wait(timeout=600)
        resumed = run_cli("resume", s3_uri, env=driver_env) if code != 0 else None
    finally:
        stop_all(procs)
    said.seek(0)
    errs = said.read()
    # an outage of the API is not the death of the worker running rollout 1 (a slow start of another stage may be)
    assert not [ln for ln in errs.splitlines() if "rollout 1:" in ln and "stopped its heartbeat" in ln], errs[-4000:]
    if bound_s > down_s:
        assert code == 0 and "rollout 1: the Prefect API answers again after" in errs, errs[-4000:]
    else:
        assert code != 0 and f"the Prefect API ({api}) has not answered for {bound_s}s" in errs, errs[-4000:]
        assert f"`rlvr resume {s3_uri}`" in errs and resumed.returncode == 0, resumed.stderr[-3000:]
    _equals_unplaced(s3_uri, ref)
    assert orphans(s3_uri) == []


@pytest.mark.slow
def test_a_full_disk_on_a_worker_names_it_and_a_resume_after_freeing_space_completes(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path, s3_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's cache (its working copies of the s3:// run) is a real 1.5 MB tmpfs: rollout and verify
    fit, update 0's checkpoint does not. The driver stops with the worker's reason, naming the folder, the
    bytes needed and free, and the run to resume; no record, no temporary file, no object is left
    half-written, and once the disk is larger `rlvr resume` completes the run, equal to an unplaced one."""
    from tests.helpers.mounts import mount, tmpfs

    ref, driver_home, worker_home = _reference_and_placed(tmp_path, small_config, monkeypatch, "small", "worker")
    cmd, env = driver_command(driver_home, prefect_server, s3_uri, 2)
    cache = worker_home / "cache"
    with tmpfs(cache, "1500k"):
        worker = worker_process(
            worker_home, prefect_server, "--stages", "rollout,verify,update", "--pool", "small", "--name", "small"
        )
        try:
            driver = subprocess.run(cmd, cwd=driver_home, env=env, capture_output=True, text=True, timeout=600)
            said = driver.stdout + driver.stderr
            assert driver.returncode != 0, said[-3000:]
            assert f"update 0 of {s3_uri} failed on its worker" in said, said[-3000:]
            assert f"DiskSpaceError: not enough free disk for policy v1 in {cache}/" in said, said[-3000:]
            assert "it needs about 1." in said and f"then `rlvr resume {s3_uri}`" in said, said[-3000:]
            assert read_record(open_run(s3_uri).paths.record("update", 0)) is None
            assert not list(cache.rglob(".tmp-*")), "the failed attempt left no temporary output"
            assert mount("-o", "remount,size=64m", str(cache))
            resumed = run_cli("resume", s3_uri, env=env)
            assert resumed.returncode == 0, resumed.stderr[-3000:]
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    _equals_unplaced(s3_uri, ref)
    assert orphans(s3_uri) == []


@pytest.mark.slow
def test_a_worker_cut_off_from_the_network_is_replaced_and_its_late_commit_changes_nothing(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path, s3_uri: str, s3_endpoint: str, monkeypatch
) -> None:
    """Worker A reaches the store and the Prefect API through proxies of its own (tests/helpers/faultproxy.py). It
    takes rollout 1, uploads its shard and stalls before its record; the test cuts both links, its process
    alive. The driver finds its heartbeat stopped and submits rollout 1 again; worker B commits it. When A's
    network is back, A's late commit meets B's record: it keeps nothing, deletes its own uploads, and the
    run has one record per stage, equal to an unplaced run."""
    from tests.conftest import start_fault_proxy

    ref, driver_home, a_home, b_home = _reference_and_placed(tmp_path, small_config, monkeypatch, "gen", "a", "b")
    s3_link, s3_steer, p1 = start_fault_proxy(s3_endpoint, tmp_path)
    api_link, api_steer, p2 = start_fault_proxy(prefect_server.removesuffix("/api"), tmp_path, tcp=True)
    beat = {"RLVR_HEARTBEAT_SECONDS": "10"}
    # A stalls long enough for B to start and commit on a loaded machine before A's network is back
    a_env = beat | {"AWS_ENDPOINT_URL": s3_link, FAULT_ENV: "rollout:1:before_record:stall=90"}
    cmd, env = driver_command(driver_home, prefect_server, s3_uri, 2, beat)
    said = (driver_home / "driver.log").open("w+")
    procs = [p1, p2]
    try:
        a = worker_process(
            a_home, f"{api_link}/api", "--stages", "rollout,verify,update", "--pool", "gen", "--name", "a", env=a_env
        )
        driver = subprocess.Popen(cmd, cwd=driver_home, env=env, stdout=said, stderr=subprocess.STDOUT, start_new_session=True)
        procs += [a, driver]
        deadline = time.monotonic() + 450
        while "rollout 1: taken by worker a" not in (driver_home / "driver.log").read_text():
            assert time.monotonic() < deadline and driver.poll() is None, (driver_home / "driver.log").read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(2)  # its shard is uploaded; it stalls before its record
        s3_steer.set(cut=True)
        api_steer.set(cut=True)
        procs.append(
            worker_process(b_home, prefect_server, "--stages", "rollout,verify,update", "--pool", "gen", "--name", "b", env=beat)
        )
        while "rollout 1: committed by b" not in (driver_home / "driver.log").read_text():
            assert time.monotonic() < deadline, (driver_home / "driver.log").read_text()[-3000:]
            time.sleep(0.5)
        s3_steer.set()
        api_steer.set()
        assert driver.wait(timeout=600) == 0, (driver_home / "driver.log").read_text()[-4000:]
        a_log = lambda: "".join(f.read_text() for f in a_home.glob("worker-*.log"))  # noqa: E731
        while "was committed by another writer first" not in a_log():
            assert time.monotonic() < deadline, a_log()[-3000:]
            time.sleep(0.5)
    finally:
        stop_all(procs)
    said.seek(0)
    errs = said.read()
    assert "rollout 1: worker a (pid" in errs and "stopped its heartbeat for 10s" in errs, errs[-4000:]
    paths = open_run(s3_uri).paths
    assert read_record(paths.record("rollout", 1)).worker["name"] == "b"
    _equals_unplaced(s3_uri, ref)
    assert orphans(s3_uri) == [], "A's late uploads were deleted by A itself"


@pytest.mark.slow
def test_four_runs_on_one_server_and_one_bucket_each_equal_running_alone(
    tmp_path: Path, prefect_server: str, small_config: Config, tiny_model: Path, s3_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four drivers (seeds 0-3) share one Prefect server, one bucket and four workers of one pool; any
    worker takes any run's stage. Each run equals the same run trained alone, and each prefix holds only
    the objects its own records list."""
    runs = [s3_uri.replace("/runs/exp1", f"/runs/seed{k}") for k in range(4)]
    configs, refs = [], []
    for k in range(4):
        data = small_config.model_dump()
        data["run"]["seed"] = k
        data["rollout"]["prompts_per_iteration"] = 8
        home = machine(tmp_path, f"reference{k}")
        monkeypatch.chdir(home)
        ref = create_or_open(home / "run", Config.model_validate(data), 2)
        _train_here(ref.paths.root)
        refs.append(ref)
        data["placement"] = {"rollout": "shared", "verify": "shared", "update": "shared"}
        configs.append(Config.model_validate(data))
    beat = {"RLVR_HEARTBEAT_SECONDS": "10"}
    procs = []
    try:
        for k in range(4):
            home = machine(tmp_path, f"worker{k}")
            procs.append(
                worker_process(home, prefect_server, "--stages", "rollout,verify,update", "--pool", "shared", "--name", f"w{k}")
            )
        drivers = []
        for k, (uri, config) in enumerate(zip(runs, configs, strict=True)):
            home = machine(tmp_path, f"driver{k}")
            (home / "placed.toml").write_text(config.to_toml())
            cmd, env = driver_command(home, prefect_server, uri, 2, beat)
            log = (home / "driver.log").open("w")
            drivers.append(subprocess.Popen(cmd, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        procs += drivers
        codes = [d.wait(timeout=900) for d in drivers]
    finally:
        stop_all(procs)
    logs = [(tmp_path / f"driver{k}" / "driver.log").read_text() for k in range(4)]
    assert codes == [0] * 4, [log[-2000:] for log in logs]
    workers = set()
    for uri, ref in zip(runs, refs, strict=True):
        plan = ref.config.stage_plan()
        _equals_unplaced(uri, ref)
        assert orphans(uri) == [], uri  # its prefix holds only what its own records list (and its metadata)
        paths = open_run(uri).paths
        workers |= {read_record(paths.record(*k)).worker["name"] for k in plan if k[0] != "prepare"}
    assert len({tuple(p for p, _ in _outputs(u, refs[0].config.stage_plan())[("rollout", 0)]) for u in runs}) == 1
    assert len({_outputs(u, refs[0].config.stage_plan())[("rollout", 0)][0][1] for u in runs}) == 4, "four seeds, four runs"
    assert len(workers) >= 2, "the pool's workers shared the runs' stages"
