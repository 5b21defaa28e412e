"""The docs site: the generated pages match the code and the README stays an introduction. The strict
build and the include hook: tests/integration/test_docs_build.py.

Test: pytest tests/unit/project/test_docs.py (`make docs` builds the site itself)
"""

from __future__ import annotations

import importlib.util
import re

from tests.helpers import ROOT


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_generated_reference_pages_match_the_code() -> None:
    stale = _script("docs_reference").stale()
    assert stale == [], f"{stale}: run python scripts/docs_reference.py and commit the pages"


def test_the_config_reference_holds_every_line_rlvr_config_prints() -> None:
    from rlvr.config import commented_toml

    page = (ROOT / "docs" / "reference" / "config.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", page, re.DOTALL)
    assert [line for b in blocks for line in b.splitlines() if line] == [line for line in commented_toml().splitlines() if line]


def test_the_cli_reference_has_a_section_per_command() -> None:
    from rlvr.flows.cli import app

    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    for c in app.registered_commands:
        name = c.name or c.callback.__name__.replace("_", "-")
        assert f"\n## rlvr {name}\n" in page, name
    assert "\n## rlvr models prepare\n" in page and "--version" in page


def test_the_readme_is_an_introduction_with_the_two_commands_first() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300
    first_screen = "\n".join(lines[:40])
    assert "make train" in first_screen and "make test" in first_screen
    for view in ("rlvr status", "rlvr sql", "rlvr report"):
        assert view in "\n".join(lines[:80]), view
