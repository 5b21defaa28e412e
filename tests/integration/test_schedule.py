"""Schedules that fire: the set-up docs/guide/running.md documents, for real.

A `prefect server start --host 127.0.0.1 --port N` started here (its scheduler service creates
the scheduled flow runs), `rlvr serve RUN --every 5` against it, and two scheduled flow runs
observed completing consecutive iterations of one run. Also: a second schedule and a manual
train on the served run are refused clearly, `rlvr status` shows the next scheduled run, and
without a reachable server `serve` refuses to start and says how to start one.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.procs import descendants, kill_tree
from rlvr.schema import RunPaths
from rlvr.store.locks import serve_info
from rlvr.store.records import read_record
from rlvr.store.run import RunError, open_run

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`prefect server start` as a user runs it, with the scheduler looking every second (default 60 s)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {
        "PREFECT_HOME": str(tmp_path_factory.mktemp("prefect-server-home")),
        "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "1",
        "PREFECT_UI_ENABLED": "false",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    log = tmp_path_factory.mktemp("prefect-server-log") / "server.log"
    with log.open("w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    api = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{api}/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        yield {"api": api, "env": env | {"PREFECT_API_URL": api, "PREFECT_RUNNER_POLL_FREQUENCY": "1", "COLUMNS": "250"}}
    finally:
        kill_tree([proc.pid, *descendants(proc.pid)], grace_s=5)
        proc.wait()


def _cli(*args: str, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlvr.flows.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _flow_runs(api: str, deployment: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

    async def read() -> list:
        async with get_client() as client:
            return await client.read_flow_runs(deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[deployment])))

    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}):
        return asyncio.run(read())


def _completed(api: str, deployment: str) -> list:
    runs = [r for r in _flow_runs(api, deployment) if r.state and r.state.is_completed()]
    return sorted(runs, key=lambda r: r.start_time)


def test_two_scheduled_runs_train_consecutive_iterations(
    tmp_path: Path, prefect_server: dict, small_config: Config, tiny_model: Path
) -> None:
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    run = tmp_path / "run"
    create_or_open(run, Config.model_validate(data), 1)
    stages.prepare(run)  # iteration 0 by hand: each scheduled run then adds exactly one iteration
    for stage in (stages.rollout, stages.verify, stages.update):
        stage(run, 0)
    env = prefect_server["env"]
    t0 = time.monotonic()
    serve = subprocess.Popen(
        [sys.executable, "-m", "rlvr.flows.cli", "serve", str(run), "--every", "5", "--name", "sched"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    paths = RunPaths(run.resolve())
    checked = False
    try:
        deadline = time.monotonic() + 240
        while len(completed := _completed(prefect_server["api"], "sched")) < 2:
            assert serve.poll() is None, serve.communicate()[0][-3000:]
            if time.monotonic() > deadline:
                states = [(r.name, r.state_name) for r in _flow_runs(prefect_server["api"], "sched")]
                pytest.fail(f"two scheduled runs did not complete: {states}")
            if not checked and (paths.root / ".serve.json").is_file():
                # while served: a second schedule and a manual train are refused, status names the next run
                second = _cli("serve", str(run), "--every", "60", env=env)
                assert second.returncode == 2 and "already has a schedule" in second.stderr, second.stderr
                manual = _cli("train", "--run", str(run), "--iterations", "9", env=env)
                assert manual.returncode == 2 and "trained on a schedule by `rlvr serve`" in manual.stderr, manual.stderr
                status = _cli("status", str(run), env=env)
                assert "schedule: every 5s" in status.stdout and "next run: 20" in status.stdout, status.stdout
                checked = True
            time.sleep(1)
        elapsed = time.monotonic() - t0
        # every flow run's state before serve is stopped: at --every 5 a third run may be running by
        # now, and stopping serve under it marks it Crashed (CI saw that once); that is the test's
        # doing, not a run failing on the lock
        every = [(r.name, r.state_name, str(r.expected_start_time)) for r in _flow_runs(prefect_server["api"], "sched")]
    finally:
        os.killpg(serve.pid, signal.SIGINT)
        try:
            log = serve.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            kill_tree([serve.pid, *descendants(serve.pid)])
            log = serve.communicate()[0]
    assert checked
    runs = completed
    assert all(r.auto_scheduled for r in runs[:2])  # created by the server's scheduler, not by hand
    assert runs[0].end_time <= runs[1].start_time  # they ran one after the other
    u1, u2 = read_record(paths.record("update", 1)), read_record(paths.record("update", 2))
    assert u1.created_at < u2.created_at and open_run(run).config.run.iterations >= 3
    assert not [r for r in every if r[1] in ("Failed", "Crashed")], every  # queued runs wait; none fails on the lock
    print(f"all flow runs of the deployment: {sorted(every, key=lambda r: r[2])}")
    print(
        f"iterations target {open_run(run).config.run.iterations}; scheduled runs: {[(r.name, str(r.expected_start_time), str(r.start_time), str(r.end_time)) for r in runs]}; "
        f"iterations 1 and 2 done {elapsed:.0f}s after serve started"
    )
    assert "serving sched: every 5s" in log
    # serve stopped: nothing reports its schedule any more. (.serve.json is removed on a clean exit; one
    # stopped under a running flow run may leave it, and serve_info never reads a file whose lock is free.)
    assert serve_info(paths.root) is None


def test_serve_without_a_server_refuses_and_says_how_to_start_one(tmp_path: Path) -> None:
    create_or_open(tmp_path / "run", None, None)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(tmp_path / "home")}
    res = _cli("serve", str(tmp_path / "run"), "--every", "60", env=env)
    assert res.returncode == 2 and "needs a running Prefect server" in res.stderr
    assert "prefect server start --host 127.0.0.1" in res.stderr and "PREFECT_API_URL" in res.stderr
    res = _cli(
        "serve", str(tmp_path / "run"), "--every", "60", env=env | {"PREFECT_API_URL": f"http://127.0.0.1:{_free_port()}/api"}
    )
    assert res.returncode == 2 and "no Prefect server answers at PREFECT_API_URL=" in res.stderr
    res = _cli("serve", str(tmp_path / "run"), "--cron", "61 * * * *", env=env)
    assert res.returncode == 2 and "not a valid cron expression" in res.stderr
    assert json.loads(_cli("status", str(tmp_path / "run"), "--format", "json", env=env).stdout)[0]["stage"] == "prepare"


def test_serving_describes_the_schedule_for_status_and_removes_it_after(tmp_path: Path) -> None:
    from rlvr.flows.serve import next_scheduled, serving

    run = create_or_open(tmp_path / "run", None, None).paths.root
    api = f"http://127.0.0.1:{_free_port()}/api"  # nobody answers there
    with serving(run, deployment="rlvr-extend/d", api_url=api, schedule="every 5s", add_iterations=2):
        info = serve_info(run)
        assert info == {
            "deployment": "rlvr-extend/d",
            "api_url": api,
            "schedule": "every 5s",
            "pid": os.getpid(),
            "add_iterations": 2,
        }
        assert next_scheduled(info).startswith(f"unknown (Prefect server {api}: ")
        with pytest.raises(RunError, match="already has a schedule"):
            with serving(run, deployment="rlvr-extend/e", api_url=api, schedule="every 9s", add_iterations=1):
                pass
        assert serve_info(run)["deployment"] == "rlvr-extend/d"  # the refused second schedule wrote nothing
    assert serve_info(run) is None and not (run / ".serve.json").exists()
