"""The commands about this install and this machine, not about a run: config, doctor, models.

config prints the default config, commented; doctor says which engines, interpreters and devices
are here and what `auto` would pick; `models list | prepare NAME` handles the registered
pretrained models (rlvr/models/registry.py).

Test: tests/unit/flows/test_cli.py (config, doctor), tests/integration/test_models.py (models).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text
from rlvr.flows.cli.console import out, plain_table
from rlvr.flows.cli.errors import user_errors


@user_errors
def config() -> None:
    """Print the default config as commented TOML: save it, edit it, pass it to `rlvr train`."""
    from rlvr.config import commented_toml

    sys.stdout.write(commented_toml())


@user_errors
def doctor(
    config: Annotated[
        Path | None, typer.Argument(metavar="CONFIG.toml", help="Config whose [rollout] engine and [update] device to check.")
    ] = None,
) -> None:
    """Which engines, interpreters and devices this machine offers, and what `auto` would pick."""
    from rlvr.checks.doctor import probe
    from rlvr.config import load_config

    cfg = load_config(config)
    table = plain_table("rlvr doctor", show_header=False)
    table.add_column("what")
    table.add_column("found")
    for what, found, ok in probe(cfg):
        table.add_row(what, Text(found, "" if ok else "red"))
    out.print(table)


@user_errors
def models_list() -> None:
    """Registered models, whether each is prepared, and where (config: model.name = NAME)."""
    from rlvr.models.registry import listing

    table = plain_table("rlvr models")
    for col in ("name", "prepared", "path"):
        table.add_column(col, overflow="fold")
    rows = listing()
    for m in rows:
        table.add_row(m["name"], Text("yes", "green") if m["prepared"] else Text("no", "yellow"), m["path"])
    out.print(table)
    for m in rows:
        out.print(f"{m['name']}: {m['about']}; from {m['source']}, {m['quantization']}", highlight=False, markup=False)


@user_errors
def models_prepare(name: Annotated[str, typer.Argument(metavar="NAME", help="A registered model (`rlvr models list`).")]) -> None:
    """Convert a registered model into an HF folder in the model cache, once (offline; later calls return at once)."""
    from rlvr.models.registry import prepare

    path = prepare(name, progress=lambda msg: out.print(msg, highlight=False, markup=False))
    out.print(
        f'use it with: --set model.name="{name}"  (or [model] name = "{name}" in a config); folder: {path}',
        highlight=False,
        markup=False,
    )
