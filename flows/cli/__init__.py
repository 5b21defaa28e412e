"""The `rlvr` command line.

    rlvr train [CONFIG.toml] --run DIR [--iterations N]   create or continue a run (Prefect flow)
    rlvr resume DIR [--redo STAGE:ITERATION]              finish what a crashed run left (or redo a damaged stage)
    rlvr status DIR                                       one row per iteration and stage
    rlvr verify-store DIR                                 every committed file against its commit record
    rlvr sql DIR "SELECT ..." [--format table|csv|json]   read-only SQL over the run (--timeout, --max-memory)
    rlvr import DIR FILE [--iteration N]                  responses made elsewhere as an iteration's rollouts
    rlvr rescore DIR --set verify.F=V [--name NAME]       re-verify every stored rollout into a named scoring
    rlvr serve DIR --cron "0 * * * *"                     a Prefect deployment training DIR on a schedule
    rlvr worker --stages rollout,evaluate --pool gpu      run the stages [placement] puts on pool gpu, on this machine
    rlvr report DIR [--out report.html]                   plots and sampled responses as one HTML page
    rlvr track DIR [--backend tensorboard|mlflow|wandb]   replay a run's figures into an experiment tracker
    rlvr eval [RUN --version N | --model FOLDER] --out F  greedy or pass@k into a Parquet folder (rlvr sql F)
    rlvr export RUN --version N --out FOLDER              a clean HF folder with a model card
    rlvr doctor                                           engines, interpreters, devices
    rlvr config                                           the default config, commented
    rlvr models list | prepare NAME                       registered pretrained models (rlvr/models/registry.py)
    rlvr prompts CONFIG_OR_RUN [--n 3]                    the exact rendered prompts and their token counts
    rlvr --version                                        the installed version (pyproject's, CHANGELOG.md)

One module per command family; this file registers each command, in the order `rlvr --help` lists them:

    run.py          train, resume, serve, status: run the flows, schedule them, and what they committed
    worker.py       worker: placed stages ([placement]) run on this machine for any driver
    inspection.py   verify-store, sql, report, track: read a run, change nothing in it
    data.py         import, rescore, prompts: responses made elsewhere, new scorings, the rendered prompts
    policies.py     eval, export: one policy (a run's version, or a model folder) evaluated or handed on
    environment.py  config, doctor, models: this install and this machine, no run
    errors.py       @user_errors on every command (one line, exit 2), bugs in one line and a log file
    console.py      the two consoles: plain text, no markup

    python -m rlvr.flows.cli ...   same as `rlvr ...` (__main__.py)

It lives in flows/ because train and resume start Prefect flows; status, sql, verify-store and
config only call rlvr/ and never import Prefect, torch or transformers (so they answer in about a
second, refusals included: the user errors share one light base class, rlvr.errors.RlvrError).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rlvr.flows.cli import data, environment, inspection, policies, run, worker

app = typer.Typer(
    help="RLVR: GRPO training on verifiable rewards, orchestrated by Prefect, stored as Parquet, queried with SQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help text is plain: rich markup would eat `[rollout]`, `[[task.datasets]]`, `[model] name = ...`
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},  # a wide terminal shows each command's summary whole
)


def _print_version(value: bool) -> None:
    if value:
        # pyproject's `version` is the one source; the installed metadata carries it (make install
        # reinstalls whenever pyproject.toml changes, so the two never drift).
        from importlib.metadata import version

        typer.echo(f"rlvr {version('rlvr')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit.")
    ] = False,
) -> None:
    pass  # the help text is the Typer(help=...) above


app.command()(run.train)
app.command()(run.resume)
app.command("verify-store")(inspection.verify_store)
app.command()(run.serve)
app.command()(worker.worker)
app.command()(run.status)
app.command("sql")(inspection.sql)
app.command("import")(data.import_cmd)
app.command()(data.rescore)
app.command()(inspection.report)
app.command()(inspection.track)
app.command("eval")(policies.eval_cmd)
app.command()(policies.export)
app.command()(data.prompts)
app.command()(environment.config)
app.command()(environment.doctor)

models_app = typer.Typer(
    help="Registered pretrained models: list them, prepare one offline into the model cache.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
models_app.command("list")(environment.models_list)
models_app.command("prepare")(environment.models_prepare)
app.add_typer(models_app, name="models")


def main() -> None:
    app()
