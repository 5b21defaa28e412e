"""Which failures are worth retrying. Used by tasks/ for Prefect's retry_condition_fn.

Transient: timeouts, dropped connections, interrupted or busy I/O (a shared filesystem or an
object store blinking). Everything else (bad config, bad data, a bug) fails at once: retrying
it only delays the error message.
"""

from __future__ import annotations

import errno

import duckdb

TRANSIENT_ERRNOS = {errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ESTALE, errno.ETIMEDOUT, errno.ECONNRESET}


def is_transient(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    if isinstance(exc, (TimeoutError, ConnectionError, InterruptedError, BlockingIOError, duckdb.IOException)):
        return True
    return isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS
