"""The docs site builds: `mkdocs build --strict` (a subprocess) passes, and the include hook
rebases an included file's links and refuses one the site cannot serve. The generated pages and
the README's shape: tests/unit/project/test_docs.py.

Test: pytest tests/integration/test_docs_build.py (each build takes a few seconds)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]  # never --quiet: it hides the warnings --strict counts
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def test_the_site_builds_strict(tmp_path: Path) -> None:
    res = subprocess.run([*MKDOCS, "--site-dir", str(tmp_path / "site")], cwd=ROOT, env=ENV, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "site" / "reference" / "config" / "index.html").exists()
    home = (tmp_path / "site" / "index.html").read_text()
    assert 'href="design/"' in home and 'href="guide/data/"' in home  # README's links to DESIGN.md and docs/guide/data.md


def _site(tmp_path: Path, included: str) -> subprocess.CompletedProcess:
    """A one-page site whose page includes NOTES.md (text `included`), built with the repository's hook."""
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "x.md").write_text("# X\n\n## Part\n")
    (tmp_path / "docs" / "index.md").write_text("<!-- include NOTES.md -->\nshown by the site\n")
    (tmp_path / "NOTES.md").write_text(included)
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: t\nhooks:\n  - {ROOT / 'scripts' / 'docs_hooks.py'}\nvalidation:\n  anchors: warn\n"
        "nav:\n  - index.md\n  - guide/x.md\n"
    )
    return subprocess.run(MKDOCS, cwd=tmp_path, env=ENV, capture_output=True, text=True)


def test_an_included_file_links_to_docs_pages_from_where_it_lives(tmp_path: Path) -> None:
    res = _site(tmp_path, "# Notes\n\n[x](docs/guide/x.md#part) and [web](https://example.org)\n")
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "site" / "index.html").read_text()
    assert 'href="guide/x/#part"' in html and 'href="https://example.org"' in html


@pytest.mark.parametrize(
    ("link", "says"),
    [
        ("[t](tests/test_docs.py)", "NOTES.md links to tests/test_docs.py"),  # a file outside docs/
        ("[t](docs/guide/nope.md)", "not found"),  # a page that does not exist
        ("[t](docs/guide/x.md#nope)", "does not contain an anchor"),
    ],
)
def test_an_included_link_the_site_cannot_serve_fails_the_build(tmp_path: Path, link: str, says: str) -> None:
    res = _site(tmp_path, f"# Notes\n\n{link}\n")
    assert res.returncode != 0 and says in res.stderr, res.stderr
