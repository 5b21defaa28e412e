"""Retries are for transient errors only (a config or data error fails at once)."""

from __future__ import annotations

import errno

import duckdb
import pytest
from prefect.states import Failed

from rlvr.config import ConfigError
from rlvr.errors import is_transient
from rlvr.tasks.stages import retry_transient


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (TimeoutError("slow disk"), True),
        (ConnectionResetError(), True),
        (OSError(errno.EIO, "I/O error"), True),
        (duckdb.IOException("read failed"), True),
        (OSError(errno.ENOSPC, "disk full"), False),
        (FileNotFoundError("model"), False),
        (ConfigError("bad"), False),
        (ValueError("bad row"), False),
        (None, False),
    ],
)
def test_transient_classification(exc: BaseException | None, transient: bool) -> None:
    assert is_transient(exc) is transient
    assert retry_transient(None, None, Failed(data=exc)) is transient
