"""Every bench prints and writes its results through one helper (bench/machine.py's write_result), with
the machine block that ../shared/BENCH.md asks of a result (machine_info: the cores and the memory,
beside the CPU, Python and load), the versions and the settings."""

from __future__ import annotations

import json
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


def test_no_bench_writes_its_results_by_hand() -> None:
    own = [
        f"{script.relative_to(ROOT)}:{n}"
        for script in sorted(BENCH.glob("*.py"))
        if script.name != "machine.py"
        for n, line in enumerate(script.read_text().splitlines(), 1)
        if re.search(r"write_text\(\s*json\.dumps", line)
    ]
    assert not own, f"use bench/machine.py's write_result() to print and write a bench's results: {own}"


def test_write_result_prints_the_figures_and_writes_them_with_the_sections_machine_versions_settings(
    tmp_path, capsys, monkeypatch
) -> None:
    write_result = bench_module("machine").write_result
    monkeypatch.setattr("sys.argv", ["/somewhere/bench/demo.py", "--rows", "4"])
    out = tmp_path / "deep" / "demo.json"
    got = write_result(
        out, {"rows_per_s": 12.5, "ratio": 2.0}, settings={"out": out}, versions={"duckdb": "1.0"}, runs_s=[1.0, 2.0], note="n"
    )
    assert capsys.readouterr().out == "rows_per_s: 12.5\nratio: 2.0\n"
    assert list(got) == ["figures", "runs_s", "note", "machine", "versions", "settings"]
    assert got["settings"] == {"command": "python bench/demo.py --rows 4", "out": out}  # the command first
    assert got["machine"]["cores"] >= 1 and got["versions"] == {"duckdb": "1.0"}
    text = out.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "figures": {\n    "rows_per_s": 12.5,')
    assert json.loads(text) == got | {"settings": {"command": "python bench/demo.py --rows 4", "out": str(out)}}


def test_write_result_keeps_a_given_command_and_machine_and_prints_nothing_when_told(tmp_path, capsys) -> None:
    write_result = bench_module("machine").write_result
    out = tmp_path / "r.json"
    got = write_result(out, {"a_s": 1}, echo=False, machine=[{"cores": 2}], versions=[{}], settings={"command": "c", "k": 1})
    assert capsys.readouterr().out == ""
    assert (
        json.loads(out.read_text())
        == got
        == {
            "figures": {"a_s": 1},
            "machine": [{"cores": 2}],
            "versions": [{}],
            "settings": {"command": "c", "k": 1},
        }
    )
