"""The "machine" block every bench writes beside its figures (bench/README.md): the cores, memory, CPU
and Python it ran on, and the load average when it ended (other work on a shared machine slows a
bench down, so a figure is read with it). `machine_info(**extra)` adds a bench's own entries."""

from __future__ import annotations

import os
import platform


def machine_info(**extra: object) -> dict:
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
    } | extra
