"""The commands that read a run and change nothing in it: verify-store, sql, report, track (which writes
only to a tracker and the run's tracking/ side files).

verify-store and sql never import Prefect, torch or transformers: they answer in about a second.

Test: tests/unit/flows/test_cli.py, tests/unit/views/test_sql_readonly.py, tests/integration/test_integrity.py, tests/unit/views/test_report.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text
from rlvr.flows.cli.console import err, out, plain_table, run_location
from rlvr.flows.cli.errors import fail, user_errors


@user_errors
def verify_store(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix.")],
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

    if remove_orphans:
        out.print(f"{run}: removed {len(remove(run))} object(s) that no commit record lists", soft_wrap=True)
    problems, checked = check_store(run)
    if left := orphans(run):
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        out.print(
            f"{run}: {len(left)} object(s) that no commit record lists, never read (uploads of an attempt killed before "
            f"its commit, or of one running now): {shown}; delete them with `rlvr verify-store {run} --remove-orphans`",
            soft_wrap=True,
        )
    if not problems:
        out.print(f"{run}: {checked} committed files match their commit records", soft_wrap=True)
        return
    table = plain_table(f"rlvr verify-store {run}: {len(problems)} problem(s)")
    for col in ("stage", "iteration", "file", "problem", "fix"):
        table.add_column(col)
    for p in problems:
        table.add_row(p.stage, "" if p.iteration is None else str(p.iteration), p.path, p.what, f"--redo {p.redo}")
    out.print(table)
    first = earliest(problems, open_run(run).config)
    out.print(f"repair: rlvr resume {run} --redo {first.redo}   (then verify-store again: it lists what is left)", soft_wrap=True)
    raise typer.Exit(1)


@user_errors
def sql(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", parser=run_location, help="Run folder, s3://bucket/prefix, or an `rlvr eval --out` folder."
        ),
    ],
    query: Annotated[
        str,
        typer.Argument(
            metavar="SQL",
            help="One SELECT, WITH, VALUES, DESCRIBE, SUMMARIZE or SHOW statement over a run's views problems, "
            "rollouts, scores, updates, evals, scorings, reward_components, or an `rlvr eval` folder's views "
            "problems, responses, summary, pass_at_k.",
        ),
    ],
    format: Annotated[str, typer.Option("--format", metavar="table|csv|json", help="Output format.")] = "table",
    max_rows: Annotated[int, typer.Option(metavar="N", min=0, help="Rows shown by --format table.")] = 50,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Stop the query after this many seconds.")] = 60.0,
    max_memory: Annotated[
        str, typer.Option(metavar="SIZE", help="DuckDB memory limit, e.g. 500MB or 4GB (nothing spills to disk).")
    ] = "4GB",
) -> None:
    """Run read-only SQL (DuckDB) over every committed shard of a run, or over an `rlvr eval` folder's
    files; Ctrl-C cancels the query."""
    from rlvr.views.guard import check_query

    if format not in ("table", "csv", "json"):
        fail(ValueError(f"--format must be table, csv or json, got {format!r}"))
    if timeout <= 0:
        fail(ValueError(f"--timeout must be > 0 seconds, got {timeout}"))
    check_query(query)  # before pyarrow and the run are loaded: a refusal answers at once
    from rlvr.views.sql import run_sql

    try:
        result = run_sql(run, query, timeout_s=timeout, max_memory=max_memory)
    except KeyboardInterrupt:
        err.print("interrupted: query cancelled")
        raise typer.Exit(130) from None
    if format == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(result, sys.stdout.buffer)
    elif format == "json":
        sys.stdout.write(json.dumps(result.to_pylist(), default=str) + "\n")
    else:
        table = plain_table(show_lines=False)
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


@user_errors
def report(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix.")],
    out_path: Annotated[
        Path, typer.Option("--out", metavar="FILE.html", help="HTML file to write (self-contained: opens offline).")
    ] = Path("report.html"),
    responses: Annotated[int, typer.Option(metavar="N", help="Sampled responses of the last iteration shown in the table.")] = 64,
) -> None:
    """One HTML page: reward, held-out accuracy, length, entropy, KL, clipping, signal, mismatch, per-task pass
    rate and seconds per stage by iteration, and the last iteration's responses with their verdicts."""
    from rlvr.views.report import write_report

    if responses < 0:
        fail(ValueError(f"--responses must be >= 0, got {responses}"))
    path = write_report(run, out_path, responses=responses)
    out.print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser")


@user_errors
def track(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder (a local one).")],
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            metavar="tensorboard|mlflow|wandb",
            help="The tracker to send to; default: the run's tracking.backend.",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="tracking.FIELD=VALUE",
            help="Another [tracking] setting for this replay, e.g. --set tracking.mlflow_uri=http://127.0.0.1:5000 "
            "or --set tracking.tensorboard_dir=tb (repeatable; `rlvr config` lists them). run.toml is not changed.",
        ),
    ] = None,
) -> None:
    """Replay a run's committed iterations into an experiment tracker (TensorBoard, MLflow, W&B offline):
    every figure of the report per iteration and a table of sampled responses. What the destination
    already has (tracking/ in the run folder says what was sent where) is skipped, so a replay never
    writes a step twice and a second replay sends nothing."""
    from rlvr.config import apply_overrides, parse_config
    from rlvr.store.run import open_run
    from rlvr.views.track import close_trackers, sync

    r = open_run(run)
    changes = [f"tracking.backend={backend}"] if backend else []
    for item in set_ or []:
        if not item.startswith("tracking."):
            fail(ValueError(f"--set {item}: rlvr track changes [tracking] settings only (tracking.FIELD=VALUE)"))
        changes.append(item)
    settings = parse_config(apply_overrides(r.data, changes), "--set").tracking if changes else r.config.tracking
    if settings.backend == "none":
        fail(ValueError(f"{run}: tracking.backend is 'none'; name one: --backend tensorboard, mlflow or wandb"))

    def shown(part) -> None:
        rows = f", {len(part.responses)} responses" if part.responses else ""
        out.print(f"  step {part.step} {part.kind}: {len(part.metrics)} metrics{rows}", soft_wrap=True)

    try:
        result = sync(run, settings, on_part=shown)
    finally:
        close_trackers()
    t = result.target
    if not result.sent:
        out.print(f"{run}: nothing new to send to {t.label}: it has all {result.already} committed part(s)", soft_wrap=True)
        return
    again = f" ({result.already} already there)" if result.already else ""
    out.print(f"{run}: sent {len(result.sent)} part(s) to {t.label}{again}; state in {result.state_file}", soft_wrap=True)
    hint = {
        "tensorboard": f"view: tensorboard --logdir {Path(t.where).parent}",
        "mlflow": f"view: {t.where} (experiment {t.group}, run {result.run_id})",
        "wandb": f"upload: wandb sync {t.where}/wandb/offline-run-*-{result.run_id}",
    }[t.backend]
    out.print(hint, soft_wrap=True)
