"""bench/verify.py keeps running as the schema and the verifier change: a tiny run of it, its
results written to a temporary file (the committed bench/results/verify.json is not touched)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

BENCH = ROOT / "bench" / "verify.py"


def test_the_verify_bench_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    args = ["--rows", "4000", "--sample", "40", "--repeats", "1", "--no-code", "--symbolic-rows", "800", "--out", str(out)]
    proc = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert "sql_rows_per_s" in proc.stdout and figures
    # the symbolic slice: SQL decides the rows the form rules refuse, and leaves the others to math-verify
    assert figures["figures"]["symbolic_rows"] == 800
    assert 0.2 < figures["figures"]["symbolic_decided_in_sql_fraction"] < 0.9
    # the ceiling: a verifier with no rules runs, and is faster than the SQL tier with its rules
    assert figures["figures"]["bare_rows_per_s"] > 0 and figures["figures"]["sql_vs_bare_ratio"] > 0
