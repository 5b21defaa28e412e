"""The modules behind `rlvr status` and `rlvr sql` never load torch: checked in a fresh
interpreter (a subprocess), where nothing else has imported it first. The import rule itself
(imports point down only): tests/unit/project/test_layers.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

NO_TORCH = ("rlvr.views.status", "rlvr.views.sql", "rlvr.views.guard")


@pytest.mark.parametrize("module", NO_TORCH)
def test_status_and_sql_never_load_torch(module):
    code = f"import sys, {module}; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"], f"importing {module} loaded torch or transformers"


def test_the_status_and_sql_commands_never_load_torch(tmp_path):
    """The commands themselves, not only their modules: the CLI's lazy imports must not reach torch."""
    from rlvr.checks.start import create_or_open

    run = tmp_path / "run"
    create_or_open(run, None, None)
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from rlvr.flows.cli import app\n"
        f"for args in (['status', {str(run)!r}], ['sql', {str(run)!r}, 'SELECT count(*) AS n FROM rollouts']):\n"
        "    result = CliRunner().invoke(app, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-2:] == ["False", "False"], "rlvr status or rlvr sql loaded torch or transformers"
