"""The commands that read a run and change nothing: verify-store, sql, report.

verify-store and sql never import Prefect, torch or transformers: they answer in about a second.

Test: tests/test_cli.py, tests/test_sql_readonly.py, tests/test_integrity.py, tests/test_report.py.
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
