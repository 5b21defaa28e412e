"""The CLI as a process: `python -m rlvr.flows.cli --version` prints pyproject's version, and
`rlvr doctor` probes the code sandbox (bwrap, in a subprocess) and names its mode or the failed check.
The in-process help and error paths: tests/unit/flows/test_cli.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

from rlvr.flows.cli import app
from typer.testing import CliRunner

from tests.helpers import ROOT

runner = CliRunner()


def test_version_prints_pyprojects_version() -> None:
    """pyproject's `version` is the one place the version lives; `rlvr --version` prints it, as the
    installed command does too."""
    import subprocess
    import sys

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    expected = f"rlvr {pyproject['project']['version']}"
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == expected
    proc = subprocess.run([sys.executable, "-m", "rlvr.flows.cli", "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == expected


def test_doctor_names_the_code_sandbox_mode() -> None:
    from rlvr.verify.code import sandbox_problem

    res = runner.invoke(app, ["doctor"], terminal_width=300)
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "code sandbox (bwrap)" in ln)
    problem = sandbox_problem()
    assert ("mode root" in line or "mode userns" in line) if problem is None else "cannot start" in line, line


def test_doctor_reports_cuda_without_cuda_as_a_failed_check(tmp_path: Path, monkeypatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = tmp_path / "cuda.toml"
    cfg.write_text('[update]\ndevice = "cuda"\n')
    res = runner.invoke(app, ["doctor", str(cfg)], terminal_width=400)
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "update device" in ln)
    assert 'update.device = "cuda" but torch.cuda.is_available() is False' in line
