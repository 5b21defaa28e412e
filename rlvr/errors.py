"""rlvr's error base class, and which failures are worth retrying (tasks/ use is_transient as
Prefect's retry_condition_fn).

Transient: timeouts, dropped connections, interrupted or busy I/O (a shared filesystem or an
object store blinking). Everything else (bad config, bad data, a bug) fails at once: retrying
it only delays the error message.
"""

from __future__ import annotations

import errno

import duckdb


class RlvrError(Exception):
    """A user error: the message (one or two lines) says what is wrong and how to fix it. The CLI
    prints it without a traceback; anything else is a bug and gets one."""


class DiskSpaceError(RlvrError, OSError):
    """Not enough free disk for a stage's output; the message names the folder, the bytes and the knobs."""


TRANSIENT_ERRNOS = {errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ESTALE, errno.ETIMEDOUT, errno.ECONNRESET}


def is_transient(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    if isinstance(exc, (TimeoutError, ConnectionError, InterruptedError, BlockingIOError, duckdb.IOException)):
        return True
    return isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS
