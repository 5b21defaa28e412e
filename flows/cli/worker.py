"""`rlvr worker`: run placed stages ([placement]) on this machine, for any driver that submits them.

    export PREFECT_API_URL=http://driver:4200/api        # the Prefect server the driver uses
    rlvr worker --stages rollout,evaluate --pool gpu --device cuda --cache /scratch/rlvr

A worker serves one Prefect task per stage it takes (rlvr.tasks.placed: task key
`rlvr.placed.<stage>@<pool>`), one stage at a time. It needs the Prefect API and the run store (an
s3:// run; or a folder every machine sees at the same path) and nothing of the driver's disk: it has
its own cache (`--cache`, i.e. RLVR_CACHE: the object cache and working copies of s3:// runs, the
tiny model) and its own device (`--device`, i.e. RLVR_DEVICE, replacing update.device for the stages
it runs without changing the run's config or hash). It runs until Ctrl-C or SIGTERM.

Test: tests/e2e/test_workers.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rlvr.flows.cli.console import err, out
from rlvr.flows.cli.errors import fail, user_errors


def parse_stages(value: str) -> list[str]:
    """--stages 'rollout,evaluate' as a list, refusing an unknown or repeated stage."""
    from rlvr.config.sections import PLACEABLE_STAGES

    stages = [s.strip() for s in value.split(",") if s.strip()]
    if bad := [s for s in stages if s not in PLACEABLE_STAGES]:
        raise ValueError(f"--stages: unknown stage(s) {', '.join(map(repr, bad))}; choose from {', '.join(PLACEABLE_STAGES)}")
    if not stages or len(set(stages)) != len(stages):
        raise ValueError(f"--stages {value!r}: give each stage once, comma-separated, e.g. --stages rollout,evaluate")
    return stages


def allowed_roots(allow: list[str]) -> tuple[str, ...]:
    """--allow's locations, checked (an s3:// URI as a run location is) and made absolute."""
    from rlvr.store.fs import ObjectStoreError, is_remote, split_uri

    for loc in allow:
        if is_remote(loc):
            try:
                split_uri(loc)
            except ObjectStoreError as exc:
                fail(ValueError(f"--allow: {exc}"))
    return tuple(loc if is_remote(loc) else os.path.abspath(loc) for loc in allow)


@user_errors
def worker(
    stages: Annotated[
        str,
        typer.Option(
            metavar="STAGE,...",
            help="Stages this worker runs, comma-separated: prepare, rollout, verify, update, evaluate "
            "(the run's [placement] sends each to a pool).",
        ),
    ],
    pool: Annotated[
        str, typer.Option(metavar="NAME", help="Pool to serve: the name [placement] gives these stages, e.g. gpu.")
    ] = "default",
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="This worker's name in commit records and logs (default: HOST-PID).")
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="This machine's cache (RLVR_CACHE): s3:// working copies and objects, models."),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            metavar="auto|cpu|cuda",
            help="Device of the stages it runs (RLVR_DEVICE), instead of the run's update.device; the run's config is unchanged.",
        ),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            metavar="LOCATION",
            help="Serve only runs at or under this location (s3://bucket/prefix or a folder); repeat for several. "
            "Without it the worker serves any run that anyone reaching the Prefect API submits.",
        ),
    ] = None,
) -> None:
    """Run the stages that drivers place on POOL ([placement] in a run's config), until Ctrl-C.

    Needs PREFECT_API_URL: the Prefect server the driver (`rlvr train`) uses, and access to the run
    store. Start as many workers per pool as you like; each takes one stage at a time. A worker that
    dies mid-stage is noticed by the driver (no heartbeat), and the next worker of the pool runs the
    stage again from its committed inputs."""
    wanted, roots = _options(stages, pool, device, cache, allow or [])
    from rlvr.flows.start import prefect_env

    prefect_env()
    from prefect.settings import PREFECT_API_URL
    from rlvr.flows.serve import reachable_server

    api = reachable_server(
        PREFECT_API_URL.value(),
        needs="rlvr worker takes its stages from the Prefect server the driver uses (PREFECT_API_URL is not set)",
        command="rlvr worker",
    )
    _serve(wanted, pool, name, api, roots)


def _options(
    stages: str, pool: str, device: str | None, cache: Path | None, allow: list[str]
) -> tuple[list[str], tuple[str, ...]]:
    """The worker's options checked (a bad one exits with its flag named): its stages and allowed roots;
    --device and --cache go into this process's environment (RLVR_DEVICE, RLVR_CACHE)."""
    from rlvr.config.sections import check_pool_name

    try:
        wanted = parse_stages(stages)
    except ValueError as exc:
        fail(exc)
    try:
        check_pool_name(pool)
    except ValueError as exc:
        fail(ValueError(f"--pool: {exc}"))
    roots = allowed_roots(allow)
    if device is not None:
        if device not in ("auto", "cpu", "cuda"):
            fail(ValueError(f"--device {device!r}: use auto, cpu or cuda"))
        os.environ["RLVR_DEVICE"] = device
    if cache is not None:
        os.environ["RLVR_CACHE"] = str(cache.resolve())
    return wanted, roots


def _serve(stages: list[str], pool: str, name: str | None, api: str, allow: tuple[str, ...] = ()) -> None:
    from rlvr.tasks.placed import placed_task, serve_placed, task_key, worker_identity

    from rlvr.files import code_fingerprint
    from rlvr.models.load import resolve_device
    from rlvr.models.registry import cache_root

    me = worker_identity(name)
    override = os.environ.get("RLVR_DEVICE")  # checked now: "cuda" on a machine without CUDA is refused at once
    shown = "update.device of each run" if override is None else str(resolve_device(override))
    out.print(
        f"worker {me['name']} (pid {me['pid']} on {me['host']}): stages {', '.join(stages)} of pool {pool!r} "
        f"from {api}; cache {cache_root()}, device {shown}; rlvr code {code_fingerprint()}; Ctrl-C stops",
        soft_wrap=True,
    )
    out.print("task keys: " + ", ".join(task_key(s, pool) for s in stages), soft_wrap=True)
    out.print(
        f"serves runs under {', '.join(allow)} only" if allow else "serves any run location (give --allow to restrict it)",
        soft_wrap=True,
    )
    tasks = [placed_task(s, pool, me, allow) for s in stages]
    from rlvr.flows.lifecycle import Stopped, stop_on_signals
    from rlvr.flows.progress import progress_bars

    try:
        # Ctrl-C: the stage in flight is abandoned (its child processes stopped, nothing committed), and its
        # driver submits it again once the heartbeat runs out; SIGTERM (Prefect's task worker handles it)
        # lets the stage in flight finish first
        with stop_on_signals(), progress_bars(err):
            serve_placed(tasks, me)
    except Stopped as stop:
        out.print(f"worker {me['name']}: stopped by {stop}; a stage it was running goes to the next worker of pool {pool!r}")
        sys.stdout.flush()
        # not exit_now: Prefect's exit hooks wait for the task worker's thread, which may be inside a stage; a
        # working copy left behind is removed by the next process that opens one (rlvr.store.workspace)
        os._exit(stop.exit_code)
