"""MkDocs hooks (mkdocs.yml `hooks:`): pages that show a file of the repository.

A docs page whose first line is `<!-- include PATH -->` shows the file at PATH (relative to the
repository root) instead of its own text: README.md is the home page, DESIGN.md the design,
bench/README.md the benchmarks, CHANGELOG.md the changelog. Each text keeps one source and still
reads on GitHub where it lives. Relative links in an included file are rebased onto its page; a
link to another included file goes to that file's page. A link to a file that is neither in docs/
nor included stops the build with the file and the link: the site could not serve it.

Run: mkdocs build --strict (make test does). Test: pytest tests/unit/project/test_docs.py
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

INCLUDE = re.compile(r"<!-- include (\S+) -->")
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")  # [text](target) and ![alt](target)
EXTERNAL = re.compile(r"^([a-z][a-z0-9+.-]*:|#|/)")  # a URL, an anchor on the same page, a site-absolute path

_pages: dict[str, str] = {}  # repository path of an included file -> the docs page (src_uri) showing it


def _included(path: Path) -> str | None:
    m = INCLUDE.match(path.read_text(encoding="utf-8").split("\n", 1)[0])
    return m.group(1) if m else None


def on_files(files, config):
    _pages.clear()
    for f in files.documentation_pages():
        if source := _included(Path(f.abs_src_path)):
            _pages[source] = f.src_uri
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    m = INCLUDE.match(markdown.split("\n", 1)[0])
    if not m:
        return markdown
    root = Path(config["config_file_path"]).parent
    docs = Path(config["docs_dir"]).relative_to(root).as_posix()
    source = m.group(1)
    here = posixpath.dirname(page.file.src_uri) or "."

    def rebase(link: re.Match) -> str:
        head, target, tail = link.groups()
        if EXTERNAL.match(target):
            return link.group(0)
        path, hash_, anchor = target.partition("#")
        repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        if repo_path in _pages:
            page_path = _pages[repo_path]
        elif repo_path.startswith(f"{docs}/"):
            page_path = repo_path[len(docs) + 1 :]
        else:
            raise PluginError(
                f"{source} links to {target} ({repo_path}), which the site cannot serve: link a page under "
                f"{docs}/, or write the path as `code`"
            )
        return f"{head}{posixpath.relpath(page_path, here)}{hash_}{anchor}{tail}"

    return LINK.sub(rebase, (root / source).read_text(encoding="utf-8"))
