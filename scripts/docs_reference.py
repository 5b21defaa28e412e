"""The generated pages of the docs site: the configuration reference (the text `rlvr config`
prints, one block per section) and the CLI reference (`rlvr --help` and each command's help).

Both are committed, so they read on GitHub too, and tests/unit/project/test_docs.py fails when either differs
from what the code generates. After changing a field's description or a command's help:

    python scripts/docs_reference.py          # rewrites docs/reference/config.md and cli.md
    python scripts/docs_reference.py --check  # exit 1 and name the stale pages
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 100  # the help's line width, fixed so the page does not depend on the terminal that generates it
SECTION = re.compile(r"^\[(\w+)\]$", re.MULTILINE)  # a top-level table of `rlvr config`: [run], [rollout], ...


def config_page() -> str:
    from rlvr.config import commented_toml

    text = commented_toml()
    starts = [m.start() for m in SECTION.finditer(text)]
    header = text[: starts[0]].strip()
    parts = [
        "# Configuration reference",
        "",
        "Every field of the config tree with its default and what it does: the text `rlvr config`",
        "prints, one block per section. Save it, edit it, pass it to `rlvr train`:",
        "",
        "```bash",
        "rlvr config > my.toml",
        "rlvr train my.toml --run runs/exp1",
        "rlvr train --run runs/exp1 --set rollout.group_size=16   # or override single fields",
        "```",
        "",
        "Generated from `rlvr/config/` by `scripts/docs_reference.py`; edit the descriptions there.",
        "",
        "```toml",
        header,
        "```",
    ]
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        block = text[start:end].strip()
        parts += ["", f"## {block.splitlines()[0]}", "", "```toml", block, "```"]
    return "\n".join(parts) + "\n"


def _commands(app, prefix: list[str]) -> list[list[str]]:
    from typer.main import get_command_name

    found = []
    for c in app.registered_commands:
        found.append([*prefix, c.name or get_command_name(c.callback.__name__)])
    for g in app.registered_groups:
        found.append([*prefix, g.name])
        found += _commands(g.typer_instance, [*prefix, g.name])
    return found


def _help(app, args: list[str]) -> str:
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, [*args, "--help"], prog_name="rlvr", terminal_width=WIDTH)
    assert res.exit_code == 0, res.output
    return res.output.rstrip()


def cli_page() -> str:
    from rlvr.flows.cli import app

    parts = [
        "# CLI reference",
        "",
        "Every `rlvr` command's `--help`. Generated from `flows/cli/` by `scripts/docs_reference.py`;",
        "edit the help there.",
        "",
        "```text",
        _help(app, []),
        "```",
    ]
    for cmd in _commands(app, []):
        parts += ["", f"## rlvr {' '.join(cmd)}", "", "```text", _help(app, cmd), "```"]
    return "\n".join(parts) + "\n"


PAGES = {"docs/reference/config.md": config_page, "docs/reference/cli.md": cli_page}


def stale() -> list[str]:
    """The generated pages whose committed text differs from what the code generates now."""
    return [path for path, page in PAGES.items() if not (ROOT / path).exists() or (ROOT / path).read_text() != page()]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        bad = stale()
        for path in bad:
            print(f"{path} is stale: run python scripts/docs_reference.py", file=sys.stderr)
        return 1 if bad else 0
    for path, page in PAGES.items():
        (ROOT / path).write_text(page())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
