"""Every bench writes the machine it ran on through one helper (bench/machine.py), with what
../shared/BENCH.md asks of a result: the cores and the memory, beside the CPU, Python and load."""

from __future__ import annotations

import re

from tests.helpers import ROOT
from tests.helpers.bench_scripts import BENCH, bench_module


def test_machine_info_holds_cores_memory_and_a_bench_s_own_entries() -> None:
    info = bench_module("machine").machine_info(torch_threads=3)
    assert info["cores"] >= 1 and info["memory_gb"] > 0 and info["python"].count(".") == 2
    assert len(info["load_average_end"]) == 3 and info["torch_threads"] == 3


def test_no_bench_builds_its_own_machine_block() -> None:
    own = [
        f"{script.relative_to(ROOT)}:{n}"
        for script in sorted(BENCH.glob("*.py"))
        for n, line in enumerate(script.read_text().splitlines(), 1)
        if re.search(r'"machine":\s*\{', line)
    ]
    assert not own, f"use bench/machine.py's machine_info() for the machine block: {own}"
