"""The outcome of running a solution against its tests, whatever their kind (asserts, stdin/stdout)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodeVerdict:
    passed: bool
    # asserts passed / assert statements, or cases passed / cases (no asserts: 1 or 0)
    fraction: float
    # names the first failing assert or case, or the timeout or limit that stopped it; counts
    reason: str
    seconds: float
    # a run was killed at its wall-clock limit (RunResult.wall_timeout): check_many runs it again
    wall_timeout: bool = False
