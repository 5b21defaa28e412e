"""The CLI's two consoles and the plain-text helpers every command prints with; how a run argument reads.

Every text the CLI prints is plain: run folders, queries' cells, model responses and error messages
hold brackets and colons (`x[i]`, `[/b]`, `:smile:`) that rich would read as markup or emoji, drop
or crash on. Styling is explicit: Text objects (`styled`), never markup in a string.

Test: tests/unit/flows/test_cli.py (folders, cells and messages print as they read).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

# not on a terminal (a pipe, a log file, CI) rich would wrap at 80 columns; tables stay one line per row
out = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 250, markup=False, emoji=False)
err = Console(stderr=True, markup=False, emoji=False)


def styled(style: str, head: str, rest: str = "") -> Text:
    """`head` in `style`, then `rest`; both plain text (a markup tag in either is shown as typed)."""
    return Text.assemble((head, style), rest)


def run_location(value: str) -> Path | str:
    """A run argument (typer's parser=): a local folder as a Path, an object-store URI
    (s3://bucket/prefix) kept as typed (a Path would fold its '//')."""
    from rlvr.store.fs import is_remote

    return value if is_remote(value) else Path(value)


def plain_table(title: str | None = None, **kwargs) -> Table:
    """A rich Table whose title is plain text; add_column / add_row take Text or plain strings (the
    CLI's consoles read no markup, so a cell prints exactly as the value reads)."""
    return Table(title=None if title is None else Text(title), **kwargs)
