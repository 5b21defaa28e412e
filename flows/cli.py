"""The `rlvr` command line.

    rlvr train [CONFIG.toml] --run DIR [--iterations N]   create or continue a run (Prefect flow)
    rlvr resume DIR [--redo STAGE:ITERATION]              finish what a crashed run left (or redo a damaged stage)
    rlvr status DIR                                       one row per iteration and stage
    rlvr verify-store DIR                                 every committed file against its commit record
    rlvr sql DIR "SELECT ..." [--format table|csv|json]   read-only SQL over the run (--timeout, --max-memory)
    rlvr import DIR FILE [--iteration N]                  responses made elsewhere as an iteration's rollouts
    rlvr rescore DIR --set verify.F=V [--name NAME]       re-verify every stored rollout into a named scoring
    rlvr serve DIR --cron "0 * * * *"                     a Prefect deployment training DIR on a schedule
    rlvr report DIR [--out report.html]                   plots and sampled responses as one HTML page
    rlvr doctor                                           engines, interpreters, devices
    rlvr config                                           the default config, commented
    rlvr models list | prepare NAME                       registered pretrained models (rlvr/models/registry.py)
    rlvr prompts CONFIG_OR_RUN [--n 3]                    the exact rendered prompts and their token counts

It lives in flows/ because train and resume start Prefect flows; status, sql, verify-store and
config only call rlvr/ and never import Prefect, torch or transformers (so they answer in about a
second, refusals included: the user errors share one light base class, rlvr.errors.RlvrError).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

app = typer.Typer(
    help="RLVR: GRPO training on verifiable rewards, orchestrated by Prefect, stored as Parquet, queried with SQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help text is plain: rich markup would eat `[rollout]`, `[[task.datasets]]`, `[model] name = ...`
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},  # a wide terminal shows each command's summary whole
)
# Every text the CLI prints is plain: run folders, queries' cells, model responses and error messages
# hold brackets and colons (`x[i]`, `[/b]`, `:smile:`) that rich would read as markup or emoji, drop
# or crash on. Styling is explicit: Text objects (`_styled`), never markup in a string.
# not on a terminal (a pipe, a log file, CI) rich would wrap at 80 columns; tables stay one line per row
out = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 250, markup=False, emoji=False)
err = Console(stderr=True, markup=False, emoji=False)


def _run_location(value: str) -> Path | str:
    """A run argument: a local folder (Path), or an object-store URI kept as typed (s3://bucket/prefix)."""
    from rlvr.store.fs import is_remote

    return value if is_remote(value) else Path(value)


def _styled(style: str, head: str, rest: str = "") -> Text:
    """`head` in `style`, then `rest`; both plain text (a markup tag in either is shown as typed)."""
    return Text.assemble((head, style), rest)


def _plain_table(title: str | None = None, **kwargs) -> Table:
    """A rich Table whose title is plain text; add_column / add_row take Text or plain strings (the
    CLI's consoles read no markup, so a cell prints exactly as the value reads)."""
    return Table(title=None if title is None else Text(title), **kwargs)


def _user_errors() -> tuple[type[BaseException], ...]:
    """What the CLI shows as a one-line error: rlvr's user-facing errors (RlvrError) and a missing
    file. Everything else is a bug: one line, its traceback in a log file (_bug)."""
    from rlvr.errors import RlvrError

    return (RlvrError, FileNotFoundError)


def _fail(exc: BaseException) -> None:
    err.print(_styled("bold red", "error:", f" {exc}"), highlight=False, soft_wrap=True)
    raise typer.Exit(2)


class _NoUserTracebacks:
    """logging filter: Prefect logs a failed flow's exception with its traceback; a user error's
    message is the whole story (the CLI repeats it at the end), so its traceback is dropped."""

    def filter(self, record) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], _user_errors()):
            record.exc_info, record.exc_text = None, None
        return True


def _quiet_user_tracebacks() -> None:
    import logging

    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NoUserTracebacks) for f in logger.filters):
            logger.addFilter(_NoUserTracebacks())


def _bug(exc: BaseException, run_dir: str) -> None:
    """Not a user error: a bug (or an environment rlvr does not know). The traceback goes to a log
    file; the terminal gets its last line and the file's path."""
    import traceback

    from rlvr.models.tiny import cache_root

    text = "".join(traceback.format_exception(exc))
    try:
        log = cache_root() / "logs" / f"rlvr-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"rlvr {' '.join(sys.argv[1:])}\nrun: {run_dir}\n\n{text}")
        where = f"full traceback in {log}"
    except OSError:
        where = "traceback above"
        err.print(text, highlight=False, markup=False)
    err.print(
        _styled(
            "bold red",
            "internal error",
            f" ({type(exc).__name__}: {str(exc).strip()[:300]}); {where}. "
            "This is a bug in rlvr: please report it with that file. Committed stages are kept: "
            f"`rlvr resume {run_dir}` continues.",
        ),
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def _nothing_to_do(run_dir: str) -> bool:
    """True (after saying so) when every stage of the run is committed: no Prefect, no lock, no
    write, so a finished run on a read-only disk resumes to exit 0. A run with work left that
    cannot be written, or cannot run here (update.device = "cuda" on a machine without CUDA: a run
    moved), fails here, in one line, instead of inside the flow."""
    from rlvr.checks.preflight import check_device
    from rlvr.stages.lineage import pending
    from rlvr.store.locks import writer_lock
    from rlvr.store.run import RunError, open_run

    run = open_run(run_dir)
    todo = pending(run)
    if not todo:
        out.print(
            f"run {run_dir}: all {len(run.config.stage_plan())} stages are committed, nothing to do "
            f"(more iterations: `rlvr train --run {run_dir} --iterations N`)",
            soft_wrap=True,
        )
        return True
    if not os.access(run.paths.root, os.W_OK | os.X_OK):
        stage, i = todo[0]
        raise RunError(
            f"{run_dir} is not writable (read-only disk or permissions) and {len(todo)} stage(s) are still to "
            f"compute, from {stage}{'' if i is None else f' {i}'}: copy the run to a writable disk and resume it there"
        )
    check_device(run.config)
    with writer_lock(run.paths.location):  # a second writer is refused now, not after Prefect's start (the flow locks again)
        pass
    return False


def _prefect_env() -> None:
    # A temporary Prefect server starts with the first flow; on 2 cores it can need > 20 s.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "rlvr")  # stage progress in the flow logs
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # offline machines: no telemetry errors
    import logging

    logging.getLogger("rlvr").setLevel(logging.INFO)


def _run_flow(run_dir: str) -> None:
    try:
        if _nothing_to_do(run_dir):
            _print_status(run_dir)
            return
    except _user_errors() as exc:
        _fail(exc)
    _prefect_env()
    from rlvr.flows.lifecycle import Stopped, ensure_server, exit_now, stop_on_signals

    from rlvr.store.commit import disk_full

    _quiet_user_tracebacks()

    t0 = time.perf_counter()
    try:
        with stop_on_signals():
            ensure_server()  # before prefect is imported: its settings read PREFECT_API_URL from the environment
            from rlvr.flows.progress import progress_bars
            from rlvr.flows.train import train as train_flow

            with progress_bars(err):
                results = train_flow(run_dir)
    except _user_errors() as exc:
        _fail(exc)
    except Stopped as stop:
        err.print(
            _styled(
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
            _fail(
                OSError(
                    f"the disk is full ({exc}); free some space, or keep fewer checkpoints ([checkpoint] "
                    f"keep_last, keep_every), then `rlvr resume {run_dir}`"
                )
            )
        _bug(exc, run_dir)
    except Exception as exc:
        _bug(exc, run_dir)
    done = sum(not r["skipped"] for r in results)
    out.print(
        _styled(
            "bold green",
            f"\nrun {run_dir}",
            f": {done} stages computed, {len(results) - done} skipped (already committed), {time.perf_counter() - t0:.1f}s",
        )
    )
    _print_status(run_dir)
    out.print(f'\nnext: rlvr sql {run_dir} "SELECT iteration, avg(reward) FROM scores GROUP BY 1 ORDER BY 1"')


@app.command()
def train(
    config: Annotated[
        Path | None, typer.Argument(help="TOML config (see `rlvr config`); default: built-in defaults.", metavar="CONFIG.toml")
    ] = None,
    run: Annotated[
        Path,
        typer.Option(
            "--run",
            metavar="DIR",
            parser=_run_location,
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
    from rlvr.checks.start import create_or_open
    from rlvr.store.locks import refuse_if_served
    from rlvr.store.run import has_run, open_run

    try:
        from rlvr.config import Config, apply_overrides, load_config, parse_config

        cfg = load_config(config) if config is not None else None
        if set_:
            # on an existing run, --set starts from its config: `--set checkpoint.keep_last=1` changes retention only
            existing = open_run(run).data if config is None and has_run(run) else None
            base = existing or (cfg or Config()).model_dump(mode="json", exclude_none=True)
            cfg = parse_config(apply_overrides(base, set_), "--set")
        refuse_if_served(run)
        existed = has_run(run)
        r = create_or_open(run, cfg, iterations)
        if existed and cfg is None:  # create_or_open checked a new or replaced config itself
            _check_unstarted(run)
        _check_store(run)
    except _user_errors() as exc:
        _fail(exc)
    out.print(f"run {run}: config {r.config_hash}, target {r.config.run.iterations} iterations")
    _run_flow(str(run))


def _check_store(run: Path) -> None:
    """Stop before any stage runs when committed files no longer match their records."""
    from rlvr.store.integrity import check_store, summary
    from rlvr.store.run import open_run

    problems, _ = check_store(run)
    if problems:
        _fail(RuntimeError(summary(problems, run, open_run(run).config)))


@app.command()
def resume(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder to finish.")],
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
    from rlvr.store.integrity import redo as redo_stages
    from rlvr.store.locks import refuse_if_served

    try:
        _check_unstarted(run)
        refuse_if_served(run)
        if redo:
            was = redo_stages(run, redo)
            out.print(
                f"redo {redo}: {'its commit record is removed' if was else 'not committed'}; it is recomputed now, and "
                "every later stage whose inputs it changes",
                soft_wrap=True,
            )
        _check_store(run)
    except _user_errors() as exc:
        _fail(exc)
    _run_flow(str(run))


@app.command("verify-store")
def verify_store(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder.")],
    remove_orphans: Annotated[
        bool,
        typer.Option(
            "--remove-orphans",
            help="A run on object storage: first delete the objects no commit record lists (uploads of a killed "
            "attempt), under the writer lease.",
        ),
    ] = False,
) -> None:
    """Check every committed file (size and sha256) and record against the commit records; exit 1 on damage."""
    from rlvr.store.integrity import check_store, earliest, orphans
    from rlvr.store.integrity import remove_orphans as remove
    from rlvr.store.run import open_run

    try:
        if remove_orphans:
            out.print(f"{run}: removed {len(remove(run))} object(s) that no commit record lists", soft_wrap=True)
        problems, checked = check_store(run)
        left = orphans(run)
    except _user_errors() as exc:
        _fail(exc)
    if left:
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        out.print(
            f"{run}: {len(left)} object(s) that no commit record lists, never read (uploads of an attempt killed before "
            f"its commit, or of one running now): {shown}; delete them with `rlvr verify-store {run} --remove-orphans`",
            soft_wrap=True,
        )
    if not problems:
        out.print(f"{run}: {checked} committed files match their commit records", soft_wrap=True)
        return
    table = _plain_table(f"rlvr verify-store {run}: {len(problems)} problem(s)")
    for col in ("stage", "iteration", "file", "problem", "fix"):
        table.add_column(col)
    for p in problems:
        table.add_row(p.stage, "" if p.iteration is None else str(p.iteration), p.path, p.what, f"--redo {p.redo}")
    out.print(table)
    first = earliest(problems, open_run(run).config)
    out.print(f"repair: rlvr resume {run} --redo {first.redo}   (then verify-store again: it lists what is left)", soft_wrap=True)
    raise typer.Exit(1)


def _check_unstarted(run: Path) -> None:
    """A run that committed nothing yet (a first start that failed) gets the checks of a new one
    (rlvr.checks.preflight) before Prefect starts: its model and task are read only inside the flow."""
    from rlvr.checks.preflight import check_model, check_task
    from rlvr.models.registry import model_folder
    from rlvr.store.run import open_run, started

    r = open_run(run)
    if not started(r.paths):
        folder = model_folder(r.config)
        for note in check_model(folder) if folder is not None else []:
            err.print(f"note: {note}", highlight=False)
        check_task(r.config)


@app.command()
def serve(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", parser=_run_location, help="Run folder to keep training (create it first with `rlvr train`)."
        ),
    ],
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
    from rlvr.store.locks import SERVE_INFO_FILE, serve_lock
    from rlvr.store.run import open_run

    if (cron is None) == (every is None):
        _fail(ValueError("give exactly one schedule: --cron '0 * * * *' or --every SECONDS"))
    if add_iterations < 1:
        _fail(ValueError(f"--add-iterations must be >= 1, got {add_iterations}"))
    if every is not None and every < 1:
        _fail(ValueError(f"--every must be >= 1 second, got {every}"))
    try:
        r = open_run(run)
    except _user_errors() as exc:
        _fail(exc)
    if r.paths.uri is not None:
        _fail(ValueError(f"rlvr serve schedules local runs only; train {run} with `rlvr resume {run}` (cron, a CI job)"))
    _prefect_env()
    from prefect.settings import PREFECT_API_URL

    if cron is not None:
        _check_cron(cron)
    api = _reachable_server(PREFECT_API_URL.value())
    from rlvr.flows.train import extend

    args = deployment_args(run, cron=cron, every=every, add_iterations=add_iterations, name=name)
    deployment = extend.to_deployment(**args)
    from prefect import serve as prefect_serve

    info = r.paths.root / SERVE_INFO_FILE
    try:
        with serve_lock(r.paths.root):
            schedule = f"cron {cron!r}" if cron else f"every {every}s"
            info.write_text(
                json.dumps(
                    {
                        "deployment": f"rlvr-extend/{deployment.name}",
                        "api_url": api,
                        "schedule": schedule,
                        "pid": os.getpid(),
                        "add_iterations": add_iterations,
                    }
                )
            )
            out.print(
                f"serving {deployment.name}: {cron or f'every {every}s'}, +{add_iterations} iteration(s) per run of "
                f"{run} (Prefect server {api}); Ctrl-C stops",
                soft_wrap=True,
            )
            try:
                prefect_serve(deployment)
            finally:
                info.unlink(missing_ok=True)
    except _user_errors() as exc:
        _fail(exc)


SERVER_HOWTO = (
    "start one in another terminal: `prefect server start --host 127.0.0.1 --port 4200`, then "
    "`export PREFECT_API_URL=http://127.0.0.1:4200/api` and run `rlvr serve` again"
)


def _reachable_server(api: str | None) -> str:
    """The API URL of a Prefect server that answers, or a clear refusal: without a server, a served
    deployment has nobody to create its scheduled runs, and nothing would ever start."""
    import urllib.request

    from rlvr.store.run import RunError

    if not api:
        _fail(RunError(f"rlvr serve needs a running Prefect server (it keeps the schedule and creates the runs); {SERVER_HOWTO}"))
    try:
        with urllib.request.urlopen(f"{api.rstrip('/')}/health", timeout=10) as resp:
            if resp.status == 200:
                return api
    except OSError as exc:
        _fail(RunError(f"no Prefect server answers at PREFECT_API_URL={api} ({exc}); {SERVER_HOWTO}"))
    _fail(RunError(f"the Prefect server at {api} is not healthy; {SERVER_HOWTO}"))
    return api


def _check_cron(cron: str) -> None:
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron)
    except ValueError as exc:
        why = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        _fail(ValueError(f"--cron {cron!r} is not a valid cron expression ({why}); e.g. '0 * * * *' is hourly"))


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


def _next_scheduled(info: dict) -> str:
    """The next scheduled flow run of the served deployment, asked of the Prefect server's REST API
    (plain HTTP: status does not import Prefect)."""
    import urllib.parse
    import urllib.request

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


def _print_status(run_dir: str | Path, fmt: str = "table") -> None:
    from rlvr.views.status import started_rows, status_rows

    rows = status_rows(run_dir)
    if fmt == "json":
        out.print_json(json.dumps(started_rows(rows)))
        return
    table = _plain_table(f"rlvr status {run_dir}")
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
        out.print(
            f"schedule: {info['schedule']} (+{info['add_iterations']} iteration(s) per run), deployment "
            f"{info['deployment']}, served by pid {info['pid']}; next run: {_next_scheduled(info)}",
            soft_wrap=True,
        )


def _weights_cell(weights: str) -> Text:
    """'v3', or 'v2 pruned' with 'pruned' dimmed."""
    version, sep, pruned = weights.partition(" ")
    return Text.assemble(version, sep, (pruned, "dim"))


@app.command()
def status(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder.")],
    format: Annotated[str, typer.Option("--format", metavar="table|json", help="Output format.")] = "table",
) -> None:
    """One row per iteration and stage: committed or not, rows, seconds."""
    if format not in ("table", "json"):
        _fail(ValueError(f"--format must be table or json, got {format!r}"))
    try:
        _print_status(run, format)
    except _user_errors() as exc:
        _fail(exc)


@app.command("sql")
def sql_cmd(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder.")],
    query: Annotated[
        str,
        typer.Argument(
            metavar="SQL",
            help="One SELECT, WITH, VALUES, DESCRIBE, SUMMARIZE or SHOW statement over the "
            "views problems, rollouts, scores, updates, evals, scorings, reward_components.",
        ),
    ],
    format: Annotated[str, typer.Option("--format", metavar="table|csv|json", help="Output format.")] = "table",
    max_rows: Annotated[int, typer.Option(metavar="N", min=0, help="Rows shown by --format table.")] = 50,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Stop the query after this many seconds.")] = 60.0,
    max_memory: Annotated[
        str, typer.Option(metavar="SIZE", help="DuckDB memory limit, e.g. 500MB or 4GB (nothing spills to disk).")
    ] = "4GB",
) -> None:
    """Run read-only SQL (DuckDB) over every committed shard of a run; Ctrl-C cancels the query."""
    from rlvr.views.guard import QueryError, check_query

    if format not in ("table", "csv", "json"):
        _fail(ValueError(f"--format must be table, csv or json, got {format!r}"))
    if timeout <= 0:
        _fail(ValueError(f"--timeout must be > 0 seconds, got {timeout}"))
    try:
        check_query(query)  # before pyarrow and the run are loaded: a refusal answers at once
    except QueryError as exc:
        _fail(exc)
    from rlvr.views.sql import run_sql

    try:
        result = run_sql(run, query, timeout_s=timeout, max_memory=max_memory)
    except _user_errors() as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print("interrupted: query cancelled")
        raise typer.Exit(130) from None
    if format == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(result, sys.stdout.buffer)
    elif format == "json":
        sys.stdout.write(json.dumps(result.to_pylist(), default=str) + "\n")
    else:
        table = _plain_table(show_lines=False)
        for name in result.column_names:
            table.add_column(Text(name))
        for row in result.slice(0, max_rows).to_pylist():
            table.add_row(*(Text(_sql_cell(v)) for v in row.values()))
        out.print(table)
        if result.num_rows > max_rows:
            out.print(f"({result.num_rows} rows, {max_rows} shown; --max-rows or --format csv for all)")


def _sql_cell(value: object) -> str:
    """A query result's value as the table shows it: NULL, a float to 6 significant digits, else str."""
    return "NULL" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)


@app.command("import")
def import_cmd(
    run: Annotated[
        Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder (created with --config or --set when new).")
    ],
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="JSONL or Parquet: prompt_id or prompt, response, optional logprobs, response_token_ids, finish_reason, model.",
        ),
    ],
    iteration: Annotated[
        int | None, typer.Option(metavar="N", min=0, help="Iteration to fill (default: the next without rollouts).")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", metavar="CONFIG.toml", help="TOML config of a new run.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="SECTION.FIELD=VALUE", help="Override a field of a new run's config (repeatable)."),
    ] = None,
) -> None:
    """Bring responses made elsewhere into a run as an iteration's rollouts (engine = 'import');
    then `rlvr resume DIR` verifies and trains on them (update.objective = "grpo" or "rft")."""
    import logging

    from rlvr.checks.start import create_or_open
    from rlvr.config import Config, apply_overrides, load_config, parse_config
    from rlvr.stages.ingest import import_responses
    from rlvr.store.locks import writer_lock

    logging.getLogger("rlvr").setLevel(logging.INFO)
    try:
        cfg = load_config(config) if config is not None else None
        if set_:
            cfg = parse_config(apply_overrides((cfg or Config()).model_dump(mode="json", exclude_none=True), set_), "--set")
        create_or_open(run, cfg, None)
        with writer_lock(run):
            got = import_responses(run, file, iteration)
    except _user_errors() as exc:
        _fail(exc)
    verb = "already imported" if got["skipped"] else "imported"
    out.print(f"{verb}: {got['rows']} responses as iteration {got['iteration']} of {run}; next: rlvr resume {run}")


@app.command()
def rescore(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder.")],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="verify.FIELD=VALUE",
            help="A changed verify setting, e.g. --set verify.format=think_answer "
            'or --set \'verify.rewards=[{name = "short", sql = "short.sql"}]\' (repeatable).',
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="Name of the new scoring (default: a hash of its settings).")
    ] = None,
) -> None:
    """Re-verify every stored rollout under changed verify settings into a named scoring (nothing is
    regenerated); compare with `rlvr sql DIR "SELECT scoring, avg(reward) FROM scorings GROUP BY 1"`."""
    from rlvr.stages.rescore import rescore as rescore_run

    try:
        got = rescore_run(run, set_ or [], name)
    except _user_errors() as exc:
        _fail(exc)
    for g in got:
        out.print(
            f"scoring {g['scoring']} iteration {g['iteration']}: {g['rows']} rows, {g['correct']} correct, "
            f"reward mean {g['reward_mean']:.4f}{' (already committed)' if g['skipped'] else ''}"
        )
    out.print(f'compare: rlvr sql {run} "SELECT scoring, iteration, avg(reward) FROM scorings GROUP BY ALL ORDER BY ALL"')


@app.command()
def report(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=_run_location, help="Run folder.")],
    out_path: Annotated[
        Path, typer.Option("--out", metavar="FILE.html", help="HTML file to write (self-contained: opens offline).")
    ] = Path("report.html"),
    responses: Annotated[int, typer.Option(metavar="N", help="Sampled responses of the last iteration shown in the table.")] = 64,
) -> None:
    """One HTML page: reward, held-out accuracy, length, entropy, KL, clipping, signal, mismatch, per-task pass
    rate and seconds per stage by iteration, and the last iteration's responses with their verdicts."""
    from rlvr.views.report import write_report

    if responses < 0:
        _fail(ValueError(f"--responses must be >= 0, got {responses}"))
    try:
        path = write_report(run, out_path, responses=responses)
    except _user_errors() as exc:
        _fail(exc)
    out.print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser")


@app.command()
def prompts(
    target: Annotated[Path, typer.Argument(metavar="CONFIG.toml|DIR", help="A TOML config or a run folder.")],
    n: Annotated[int, typer.Option("--n", metavar="N", min=0, help="How many prompts to show.")] = 3,
    split: Annotated[str, typer.Option("--split", metavar="train|test", help="Which split's prompts.")] = "train",
) -> None:
    """Print the first N prompts exactly as the model gets them (chat template applied) and their token counts."""
    from rlvr.views.preview import preview

    if split not in ("train", "test"):
        _fail(ValueError(f"--split must be train or test, got {split!r}"))
    try:
        shown = preview(target, n, split)
    except _user_errors() as exc:
        _fail(exc)
    for p in shown:
        sys.stdout.write(
            f"==== {p['prompt_id']} (dataset {p['dataset']}, {p['split']}): {p['tokens']} tokens ====\n{p['text']}\n"
        )
    if not shown:
        sys.stdout.write(f"no {split} prompts\n")


@app.command()
def config() -> None:
    """Print the default config as commented TOML: save it, edit it, pass it to `rlvr train`."""
    from rlvr.config import commented_toml

    sys.stdout.write(commented_toml())


@app.command()
def doctor(
    config: Annotated[
        Path | None, typer.Argument(metavar="CONFIG.toml", help="Config whose [rollout] engine and [update] device to check.")
    ] = None,
) -> None:
    """Which engines, interpreters and devices this machine offers, and what `auto` would pick."""
    from rlvr.checks.doctor import probe
    from rlvr.config import load_config

    try:
        cfg = load_config(config)
    except _user_errors() as exc:
        _fail(exc)
    table = _plain_table("rlvr doctor", show_header=False)
    table.add_column("what")
    table.add_column("found")
    for what, found, ok in probe(cfg):
        table.add_row(what, Text(found, "" if ok else "red"))
    out.print(table)


models_app = typer.Typer(
    help="Registered pretrained models: list them, prepare one offline into the model cache.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list() -> None:
    """Registered models, whether each is prepared, and where (config: model.name = NAME)."""
    from rlvr.models.registry import listing

    table = _plain_table("rlvr models")
    for col in ("name", "prepared", "path"):
        table.add_column(col, overflow="fold")
    rows = listing()
    for m in rows:
        table.add_row(m["name"], Text("yes", "green") if m["prepared"] else Text("no", "yellow"), m["path"])
    out.print(table)
    for m in rows:
        out.print(f"{m['name']}: {m['about']}; from {m['source']}, {m['quantization']}", highlight=False, markup=False)


@models_app.command("prepare")
def models_prepare(name: Annotated[str, typer.Argument(metavar="NAME", help="A registered model (`rlvr models list`).")]) -> None:
    """Convert a registered model into an HF folder in the model cache, once (offline; later calls return at once)."""
    from rlvr.models.registry import ModelError, prepare

    try:
        path = prepare(name, progress=lambda msg: out.print(msg, highlight=False, markup=False))
    except ModelError as exc:
        _fail(exc)
    out.print(
        f'use it with: --set model.name="{name}"  (or [model] name = "{name}" in a config); folder: {path}',
        highlight=False,
        markup=False,
    )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
