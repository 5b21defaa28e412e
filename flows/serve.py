"""`rlvr serve`'s dealings with Prefect: the deployment, the server it needs, and what it leaves for `rlvr status`.

- `deployment_args`: the arguments of the `extend` flow's deployment (one per run, runs queue).
- `check_cron`, `reachable_server`: refusals before anything is served (a bad cron expression;
  no Prefect server, so nobody would ever create the scheduled runs).
- `serving(run_dir, ...)`: holds the run's serve lock and writes `.serve.json` (deployment,
  API URL, schedule, pid) while the deployment is served; rlvr.store.locks.serve_info reads it.
- `next_scheduled(info)`: the served deployment's next scheduled flow run, asked of the server's
  REST API over plain HTTP, so `rlvr status` never imports Prefect.

Only `check_cron` imports Prefect (inside the function). Test: tests/integration/test_schedule.py (a real
server, scheduled runs, the refusals), tests/e2e/test_e2e.py (deployment_args).
"""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.store.locks import ServeInfo, serve_lock

SERVER_HOWTO = (
    "start one in another terminal: `prefect server start --host 127.0.0.1 --port 4200`, then "
    "`export PREFECT_API_URL=http://127.0.0.1:4200/api` and run `{command}` again"
)


class ServeError(RlvrError):
    """A schedule that cannot be served (bad cron expression, no Prefect server); the message says how to fix it."""


def check_cron(cron: str) -> None:
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron)
    except ValueError as exc:
        why = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        raise ServeError(f"--cron {cron!r} is not a valid cron expression ({why}); e.g. '0 * * * *' is hourly") from exc


def reachable_server(
    api: str | None,
    *,
    needs: str = "rlvr serve needs a running Prefect server (it keeps the schedule and creates the runs)",
    command: str = "rlvr serve",
) -> str:
    """The API URL of a Prefect server that answers, or a clear refusal: without a server, a served
    deployment has nobody to create its scheduled runs, and nothing would ever start (`needs` says
    who needs it and why, `command` what to run again: `rlvr worker` and placed runs ask too)."""
    howto = SERVER_HOWTO.format(command=command)
    if not api:
        raise ServeError(f"{needs}; {howto}")
    try:
        with urllib.request.urlopen(f"{api.rstrip('/')}/health", timeout=10) as resp:
            healthy = resp.status == 200
    except OSError as exc:
        raise ServeError(f"no Prefect server answers at PREFECT_API_URL={api} ({exc}); {howto}") from exc
    if not healthy:
        raise ServeError(f"the Prefect server at {api} is not healthy; {howto}")
    return api


def deployment_args(run: Path, *, cron: str | None, every: int | None, add_iterations: int, name: str | None) -> dict:
    """Arguments of extend.to_deployment for `rlvr serve` (separate so tests can check them).
    concurrency_limit 1: a scheduled run that comes due while the previous one still trains waits
    for it (Prefect's default collision strategy, ENQUEUE) instead of failing on the run's lock."""
    args: dict = {
        "name": name or f"rlvr-{Path(run).resolve().name}",
        "concurrency_limit": 1,
        "parameters": {"run_dir": str(Path(run).resolve()), "add_iterations": add_iterations},
    }
    if cron is not None:
        args["cron"] = cron
    else:
        args["interval"] = every
    return args


@contextmanager
def serving(run_dir: Path, *, deployment: str, api_url: str, schedule: str, add_iterations: int) -> Iterator[None]:
    """One schedule per run (the serve lock), described in `.serve.json` until serving stops."""
    info = ServeInfo(deployment=deployment, api_url=api_url, schedule=schedule, pid=os.getpid(), add_iterations=add_iterations)
    with serve_lock(run_dir, info):
        yield


def next_scheduled(info: dict) -> str:
    """The next scheduled flow run of the served deployment (`info`: what `serving` wrote), asked
    of the Prefect server's REST API (plain HTTP: status does not import Prefect)."""
    api = info["api_url"].rstrip("/")
    try:
        flow, dep = info["deployment"].split("/", 1)
        with urllib.request.urlopen(
            f"{api}/deployments/name/{urllib.parse.quote(flow)}/{urllib.parse.quote(dep)}", timeout=5
        ) as r:
            dep_id = json.loads(r.read())["id"]
        body = {
            "deployments": {"id": {"any_": [dep_id]}},
            "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
            "sort": "EXPECTED_START_TIME_ASC",
            "limit": 1,
        }
        req = urllib.request.Request(
            f"{api}/flow_runs/filter", data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            runs = json.loads(r.read())
    except (OSError, ValueError, KeyError) as exc:
        return f"unknown (Prefect server {api}: {exc})"
    return runs[0]["expected_start_time"] if runs else "none scheduled yet"
