"""How a command fails: a user error in one line (exit 2), a bug in one line and a log file (exit 1).

- `@user_errors` on every command: rlvr's user-facing errors (rlvr.errors.RlvrError, whose
  message says what is wrong and how to fix it) and a missing file become `error: <message>`.
- `fail(exc)`: the same line for a refusal the command decides itself (a bad --format).
- `bug(exc, run_dir)`: anything else; the traceback goes to a log file under the cache.
- `quiet_user_tracebacks()`: Prefect logs a failed flow's exception with its traceback; for a
  user error the message is the whole story, so its traceback is dropped from those logs.

Test: tests/unit/flows/test_cli.py, tests/unit/checks/test_preflight.py (one line, the log file, Prefect's logs).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

import typer
from rlvr.flows.cli.console import err, styled

P = ParamSpec("P")
R = TypeVar("R")


def user_error_types() -> tuple[type[BaseException], ...]:
    """What the CLI shows as a one-line error: rlvr's user-facing errors (RlvrError) and a missing
    file. Everything else is a bug: one line, its traceback in a log file (`bug`). Imported when
    asked: rlvr.errors loads duckdb, which `rlvr --help` does not need."""
    from rlvr.errors import RlvrError

    return (RlvrError, FileNotFoundError)


def fail(exc: BaseException) -> NoReturn:
    err.print(styled("bold red", "error:", f" {exc}"), highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """A command whose user errors end it with `error: <message>` and exit 2 (typer reads the
    wrapped signature and docstring, so options and help are the command's own)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except user_error_types() as exc:  # evaluated only when something was raised
            fail(exc)

    return run


class NoUserTracebacks:
    """logging filter: Prefect logs a failed flow's exception with its traceback; a user error's
    message is the whole story (the CLI repeats it at the end), so its traceback is dropped."""

    def filter(self, record) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], user_error_types()):
            record.exc_info, record.exc_text = None, None
        return True


def quiet_user_tracebacks() -> None:
    import logging

    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, NoUserTracebacks) for f in logger.filters):
            logger.addFilter(NoUserTracebacks())


def bug(exc: BaseException, run_dir: str) -> NoReturn:
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
        styled(
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
