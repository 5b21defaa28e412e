"""Installing rlvr claims one top-level name: the repository's flows/, tasks/ and data/ folders
install as rlvr.flows, rlvr.tasks and rlvr.data, so a user's own `data/` (or `flows/`, `tasks/`)
folder in the working directory cannot shadow them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

PROBE = """
import importlib.util, json
import rlvr.data, rlvr.flows.cli, rlvr.tasks.stages
print(json.dumps({"data": rlvr.data.__file__, "tasks": rlvr.data.one.__module__,
                  "user_data": getattr(importlib.util.find_spec("data"), "origin", None)}))
"""


def test_a_users_data_folder_does_not_shadow_rlvr(tmp_path: Path) -> None:
    for name in ("data", "flows", "tasks"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user folder was imported')\n")
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(seen["data"]).resolve() == (ROOT / "data" / "__init__.py").resolve()
    assert seen["tasks"] == "rlvr.data"
    # the user's folder is still theirs to import: rlvr took no generic name from it
    assert Path(seen["user_data"]).resolve() == (tmp_path / "data" / "__init__.py").resolve()


def test_rlvr_installs_no_generic_top_level_module(tmp_path: Path) -> None:
    probe = "import importlib.util as u; print([n for n in ('data', 'flows', 'tasks') if u.find_spec(n)])"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
