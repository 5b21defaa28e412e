"""The error base, and which failures are worth retrying.

RlvrError is the base of every error a user can fix (a config field, a run folder, a query, a
dataset row): its message says what is wrong and how to fix it, and the CLI prints it as one line.
Anything else reaching the CLI is a bug: one line, and a log file with its traceback.

Which failures are worth retrying: used by tasks/ for Prefect's retry_condition_fn.

Transient: timeouts, dropped connections, interrupted or busy I/O (a shared filesystem or an
object store blinking). Everything else (bad config, bad data, a bug) fails at once: retrying
it only delays the error message.
"""

from __future__ import annotations

import errno

import duckdb


class RlvrError(Exception):
    """A failure the user can fix; the message names the field, file, row or flag and the fix."""


class DiskSpaceError(RlvrError, OSError):
    """Not enough free disk for a stage's output; the message names the folder, the bytes and the knobs."""


TRANSIENT_ERRNOS = {errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ESTALE, errno.ETIMEDOUT, errno.ECONNRESET}


def is_transient(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    if isinstance(exc, (TimeoutError, ConnectionError, InterruptedError, BlockingIOError, duckdb.IOException)):
        return True
    return isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS
