"""What every bench writes, by one path (bench/README.md): `write_result()` prints the figures as
`key: value` lines and writes them to bench/results/NAME.json beside the bench's own sections, the
machine, the library versions and the settings (with the command that produced them).
`machine_info(**extra)` is the "machine" block: the cores, memory, CPU and Python it ran on, and the
load average when it ended (other work on a shared machine slows a bench down, so a figure is read
with it), plus a bench's own entries."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path


def machine_info(**extra: object) -> dict:
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
    } | extra


def write_result(
    out: Path,
    figures: dict,
    *,
    versions: dict | list,
    settings: dict,
    machine: dict | list | None = None,
    echo: bool = True,
    **sections: object,
) -> dict:
    """Print each figure as `key: value` (echo=False: the bench printed them itself, or this is a
    partial write), then write {figures, *sections, machine, versions, settings} to `out` as JSON
    (indent 2, a trailing newline), making its folder; return that dict. `machine` defaults to
    machine_info() now, at the end; `settings` gets the command line first unless it names its own
    "command"; a Path anywhere in the result is written as its string."""
    if echo:
        for k, v in figures.items():
            print(f"{k}: {v}")
    if "command" not in settings:
        settings = {"command": " ".join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])} | settings
    result = {
        "figures": figures,
        **sections,
        "machine": machine_info() if machine is None else machine,
        "versions": versions,
        "settings": settings,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=_path) + "\n")
    return result


def _path(value: object) -> str:
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable: {value!r}")
