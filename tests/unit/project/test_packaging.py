"""pyproject.toml lists its packages by hand (rlvr.tasks, rlvr.flows and rlvr.data live in tasks/, flows/
and data/): a package folder left off that list is missing from a non-editable install."""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    roots = {"rlvr": ROOT / "rlvr"} | {name: ROOT / folder for name, folder in setup["package-dir"].items()}
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            found.add(".".join([name, *rel.parts]))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set(), "these listed packages have no folder with an __init__.py"
