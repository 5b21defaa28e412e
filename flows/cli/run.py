"""The commands that run a run: train, resume, serve, status.

train and resume check the run (a new run's preflight, then flows/start.py's check_start, which
`python -m rlvr.flows.train` runs too) before Prefect starts, then run the `train` flow (flows/train.py) with
its own temporary Prefect server and signal handling (flows/lifecycle.py). serve schedules the
`extend` flow on a running Prefect server (flows/serve.py). status reads the commit records only.

Test: tests/unit/flows/test_cli.py, tests/unit/checks/test_preflight.py, tests/integration/test_signals.py, tests/integration/test_schedule.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text
from rlvr.flows.cli.console import err, out, plain_table, run_location, styled
from rlvr.flows.cli.errors import bug, fail, quiet_user_tracebacks, user_error_types, user_errors


@user_errors
def train(
    config: Annotated[
        Path | None, typer.Argument(help="TOML config (see `rlvr config`); default: built-in defaults.", metavar="CONFIG.toml")
    ] = None,
    run: Annotated[
        Path,
        typer.Option(
            "--run",
            metavar="DIR",
            parser=run_location,
            help="Run folder or s3://bucket/prefix: created if new, continued if it holds a run.",
        ),
    ] = ...,
    iterations: Annotated[
        int | None, typer.Option(metavar="N", min=1, help="Target number of iterations (overrides run.iterations).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="SECTION.FIELD=VALUE",
            help="Override one config field of a new run, e.g. --set task.name=logic --set rollout.group_size=4 (repeatable).",
        ),
    ] = None,
) -> None:
    """Create a run (or continue an existing one) and train until it has ITERATIONS iterations."""
    from rlvr.flows.start import check_start

    from rlvr.checks.start import create_or_open
    from rlvr.config import Config, apply_overrides, load_config, parse_config
    from rlvr.store.locks import refuse_if_served
    from rlvr.store.run import has_run, open_run

    cfg = load_config(config) if config is not None else None
    if set_:
        # on an existing run, --set starts from its config: `--set checkpoint.keep_last=1` changes retention only
        existing = open_run(run).data if config is None and has_run(run) else None
        base = existing or (cfg or Config()).model_dump(mode="json", exclude_none=True)
        cfg = parse_config(apply_overrides(base, set_), "--set")
    refuse_if_served(run)  # before create_or_open writes run.toml
    existed = has_run(run)
    r = create_or_open(run, cfg, iterations)
    # create_or_open checked a new or replaced config itself
    todo = check_start(run, checked_new=not (existed and cfg is None), note=_note)
    out.print(f"run {run}: config {r.config_hash}, target {r.config.run.iterations} iterations")
    _run_flow(str(run), todo)


@user_errors
def resume(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix to finish.")],
    redo: Annotated[
        str | None,
        typer.Option(
            "--redo",
            metavar="STAGE:ITERATION",
            help="Recompute this stage "
            "(e.g. rollout:3, or prepare), and every later stage whose inputs that changes, e.g. after "
            "`rlvr verify-store` reported a damaged file.",
        ),
    ] = None,
) -> None:
    """Finish a run that crashed or was killed: committed stages are skipped, the rest run."""
    from rlvr.flows.start import check_start

    from rlvr.store.integrity import redo as redo_stages
    from rlvr.store.locks import refuse_if_served

    if redo:
        refuse_if_served(run)  # before the redo removes a record
        was = redo_stages(run, redo)
        out.print(
            f"redo {redo}: {'its commit record is removed' if was else 'not committed'}; it is recomputed now, and "
            "every later stage whose inputs it changes",
            soft_wrap=True,
        )
    _run_flow(str(run), check_start(run, note=_note))


def _note(msg: str) -> None:
    err.print(f"note: {msg}", highlight=False)


def _nothing_to_do(run_dir: str) -> None:
    from rlvr.store.run import open_run

    out.print(
        f"run {run_dir}: all {len(open_run(run_dir).config.stage_plan())} stages are committed, nothing to do "
        f"(more iterations: `rlvr train --run {run_dir} --iterations N`)",
        soft_wrap=True,
    )
    _print_status(run_dir)


def _run_flow(run_dir: str, todo: list[tuple[str, int | None]]) -> None:
    """The train flow on `run_dir` to its target (`todo`: check_start's stages to compute), then the
    run's status. Stopped by a signal: the signal's exit code; a full disk outside a stage: one line;
    anything else not a user error: `bug`."""
    if not todo:
        return _nothing_to_do(run_dir)
    from rlvr.flows.lifecycle import Stopped, ensure_server, exit_now, stop_on_signals

    from rlvr.store.commit import disk_full

    quiet_user_tracebacks()

    t0 = time.perf_counter()
    try:
        with stop_on_signals():
            ensure_server()  # before prefect is imported: its settings read PREFECT_API_URL from the environment
            from rlvr.flows.progress import progress_bars
            from rlvr.flows.train import train as train_flow

            with progress_bars(err):
                results = train_flow(run_dir)
    except user_error_types():
        raise  # the command's @user_errors prints it (a missing file is an OSError, but neither a full disk nor a bug)
    except Stopped as stop:
        err.print(
            styled(
                "bold yellow",
                "stopped",
                f" by {stop}: the running stage was abandoned, committed stages are kept; `rlvr resume {run_dir}` continues",
            ),
            highlight=False,
            soft_wrap=True,
        )
        exit_now(stop.exit_code)
    except OSError as exc:
        if disk_full(exc, free=1 << 62):  # ENOSPC outside a stage (Prefect's own files, the lock)
            fail(
                OSError(
                    f"the disk is full ({exc}); free some space, or keep fewer checkpoints ([checkpoint] "
                    f"keep_last, keep_every), then `rlvr resume {run_dir}`"
                )
            )
        bug(exc, run_dir)
    except Exception as exc:
        bug(exc, run_dir)
    done = sum(not r["skipped"] for r in results)
    out.print(
        styled(
            "bold green",
            f"\nrun {run_dir}",
            f": {done} stages computed, {len(results) - done} skipped (already committed), {time.perf_counter() - t0:.1f}s",
        )
    )
    _print_status(run_dir)
    out.print(f'\nnext: rlvr sql {run_dir} "SELECT iteration, avg(reward) FROM scores GROUP BY 1 ORDER BY 1"')


@user_errors
def serve(
    run: Annotated[Path, typer.Argument(metavar="DIR", help="Run folder to keep training (create it first with `rlvr train`).")],
    cron: Annotated[str | None, typer.Option(metavar="CRON", help='Cron schedule, e.g. "0 * * * *" (hourly).')] = None,
    every: Annotated[int | None, typer.Option(metavar="SECONDS", help="Interval schedule in seconds.")] = None,
    add_iterations: Annotated[int, typer.Option(metavar="N", help="Iterations each scheduled run adds.")] = 1,
    name: Annotated[str | None, typer.Option(metavar="NAME", help="Deployment name (default: rlvr-<run folder name>).")] = None,
) -> None:
    """Serve a Prefect deployment that trains RUN on a schedule (blocks; Ctrl-C stops it).

    Needs a running Prefect server, which keeps the schedule and creates the scheduled runs:
    `prefect server start --host 127.0.0.1 --port 4200` in another terminal, and
    `export PREFECT_API_URL=http://127.0.0.1:4200/api`. Each scheduled flow run resumes what is
    pending and adds ADD_ITERATIONS iterations; runs never overlap (they queue). Runs also start
    from the Prefect UI/API: `prefect deployment run rlvr-extend/NAME`. One schedule per run."""
    from rlvr.flows.serve import check_cron, deployment_args, reachable_server, serving
    from rlvr.flows.start import prefect_env

    from rlvr.store.run import open_run

    if (cron is None) == (every is None):
        fail(ValueError("give exactly one schedule: --cron '0 * * * *' or --every SECONDS"))
    if add_iterations < 1:
        fail(ValueError(f"--add-iterations must be >= 1, got {add_iterations}"))
    if every is not None and every < 1:
        fail(ValueError(f"--every must be >= 1 second, got {every}"))
    r = open_run(run)
    if r.paths.uri is not None:
        fail(ValueError(f"rlvr serve schedules local runs only; train {run} with `rlvr resume {run}` (cron, a CI job)"))
    prefect_env()
    from prefect.settings import PREFECT_API_URL

    if cron is not None:
        check_cron(cron)
    api = reachable_server(PREFECT_API_URL.value())
    from rlvr.flows.train import extend

    args = deployment_args(run, cron=cron, every=every, add_iterations=add_iterations, name=name)
    deployment = extend.to_deployment(**args)
    from prefect import serve as prefect_serve

    schedule = f"cron {cron!r}" if cron else f"every {every}s"
    with serving(
        r.paths.root, deployment=f"rlvr-extend/{deployment.name}", api_url=api, schedule=schedule, add_iterations=add_iterations
    ):
        out.print(
            f"serving {deployment.name}: {cron or f'every {every}s'}, +{add_iterations} iteration(s) per run of "
            f"{run} (Prefect server {api}); Ctrl-C stops",
            soft_wrap=True,
        )
        prefect_serve(deployment)


@user_errors
def status(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix.")],
    format: Annotated[str, typer.Option("--format", metavar="table|json", help="Output format.")] = "table",
) -> None:
    """One row per iteration and stage: committed or not, rows, seconds."""
    if format not in ("table", "json"):
        fail(ValueError(f"--format must be table or json, got {format!r}"))
    _print_status(run, format)


def _print_status(run_dir: str | Path, fmt: str = "table") -> None:
    from rlvr.views.status import started_rows, status_rows

    rows = status_rows(run_dir)
    if fmt == "json":
        out.print_json(json.dumps(started_rows(rows)))
        return
    table = plain_table(f"rlvr status {run_dir}")
    for col in ("iteration", "stage", "committed", "rows", "seconds", "weights", "note"):
        table.add_column(col, justify="right" if col in ("rows", "seconds", "iteration") else "left")
    for r in rows:
        table.add_row(
            str(r["iteration"]),
            r["stage"],
            Text("yes", "green") if r["committed"] else Text("no", "yellow"),
            "" if r["rows"] is None else str(r["rows"]),
            "" if r["seconds"] is None else f"{r['seconds']:.2f}",
            _weights_cell(r["weights"]),
            r["note"],
        )
    out.print(table)
    from rlvr.store.locks import serve_info

    if info := serve_info(run_dir):
        from rlvr.flows.serve import next_scheduled

        out.print(
            f"schedule: {info['schedule']} (+{info['add_iterations']} iteration(s) per run), deployment "
            f"{info['deployment']}, served by pid {info['pid']}; next run: {next_scheduled(info)}",
            soft_wrap=True,
        )


def _weights_cell(weights: str) -> Text:
    """'v3', or 'v2 pruned' with 'pruned' dimmed."""
    version, sep, pruned = weights.partition(" ")
    return Text.assemble(version, sep, (pruned, "dim"))
