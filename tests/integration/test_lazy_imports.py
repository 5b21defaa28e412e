"""The import rule (DESIGN.md, "Layers"): imports point down only, function bodies included.

Every module of the library is put in a layer by its dotted name (the longest prefix listed in
LAYERS wins). A module may import its own layer or a lower one. The components (rollout, verify,
train) share a layer and never import each other; they never import the store's commit protocol
either (stages commit, components compute). Prefect is imported only by rlvr.tasks and
rlvr.flows, and the modules behind `rlvr status` and `rlvr sql` never load torch.

The walk reads every import statement with ast, inside functions too: the cycles the
module-level graph hid (run -> preflight -> retention -> run; prompts <-> tiny) were all
function-level imports.
"""

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
