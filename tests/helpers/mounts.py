"""Real read-only and full disks for tests: a read-only bind mount and a small tmpfs (root writes
through chmod, so permissions would prove nothing). Without mount rights the test skips."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` on a read-only bind mount of itself for the duration."""
    if not mount("--bind", str(folder), str(folder)):
        pytest.skip("no mount rights here (needs root in a container that allows bind mounts)")
    try:
        assert mount("-o", "remount,bind,ro", str(folder), str(folder))
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    if not mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)):
        pytest.skip("no mount rights here (needs root in a container that allows tmpfs mounts)")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)
