"""The import rule (DESIGN.md, "Layers"): imports point down only, function bodies included.

Every module of the library is put in a layer by its dotted name (the longest prefix listed in
LAYERS wins). A module may import its own layer or a lower one. The components (rollout, verify,
train) share a layer and never import each other; they never import the store's commit protocol
either (stages commit, components compute). Prefect is imported only by rlvr.tasks and
rlvr.flows (that `rlvr status` and `rlvr sql` never load torch: tests/integration/test_lazy_imports.py).

The walk reads every import statement with ast, inside functions too: the cycles the
module-level graph hid (run -> preflight -> retention -> run; prompts <-> tiny) were all
function-level imports.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

FOLDERS = {"rlvr": ROOT / "rlvr", "rlvr.flows": ROOT / "flows", "rlvr.tasks": ROOT / "tasks", "rlvr.data": ROOT / "data"}

# bottom to top; a module may import its own layer or any layer below it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("rlvr", "rlvr.errors", "rlvr.schema", "rlvr.files", "rlvr.seeds", "rlvr.progress", "rlvr.procs")),
    ("model registry", ("rlvr.models.registry",)),  # a table of names and files: no torch, read by config validation
    ("config", ("rlvr.config",)),
    (
        "model loading",
        ("rlvr.models.load", "rlvr.models.lora"),
    ),  # a policy folder onto a device: the trainer, rollout and evaluate share it
    ("store", ("rlvr.store",)),
    ("components", ("rlvr.verify", "rlvr.rollout", "rlvr.train")),
    ("problems", ("rlvr.problems", "rlvr.data")),
    ("models", ("rlvr.models",)),
    ("checks", ("rlvr.checks",)),  # preflight, doctor and starting a run: they read what the stages will use
    ("stages", ("rlvr.stages",)),
    ("views", ("rlvr.views",)),
    ("orchestration", ("rlvr.tasks", "rlvr.flows")),
]
COMPONENTS = ("rlvr.verify", "rlvr.rollout", "rlvr.train")
COMMIT_API = ("StageTx", "begin_stage", "run_stage", "create_or_open")  # the calls that commit or create a run


def module_name(path: Path) -> str:
    for pkg, folder in sorted(FOLDERS.items(), key=lambda kv: -len(str(kv[1]))):
        if path.is_relative_to(folder):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            return ".".join([pkg, *parts])
    raise ValueError(path)


def library_modules() -> dict[str, Path]:
    out = {}
    for folder in FOLDERS.values():
        for path in folder.rglob("*.py"):
            out[module_name(path)] = path
    return out


def layer_of(module: str) -> tuple[int, str]:
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > len(best[1])):
                best = (rank, p)
    if best is None:
        raise ValueError(f"{module} is in no layer: add it to LAYERS")
    return best


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, function bodies included; `from X import y`
    counts as X.y when X.y is a module, else as X."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package
                base = module.split(".")
                if not path.name == "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names] + [(node.lineno, mod)]
    return out


def violations() -> list[str]:
    mods = library_modules()
    bad = []
    for module, path in sorted(mods.items()):
        if module == "rlvr.rollout.vllm_worker" or module.startswith("rlvr.verify.code.harness"):
            continue  # run by another interpreter (the vLLM venv, the sandbox): they import no rlvr at all
        rank, own = layer_of(module)
        seen = set()
        for line, target in imports_of(path, module):
            if target.split(".")[0] == "prefect" and not module.startswith(("rlvr.tasks", "rlvr.flows")):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} imports prefect (only rlvr.tasks and rlvr.flows may)")
            if module.startswith(COMPONENTS) and target.rpartition(".")[2] in COMMIT_API and target.startswith("rlvr.store."):
                bad.append(f"{path.relative_to(ROOT)}:{line}: component {module} commits to the store (stages do)")
            if not target.startswith("rlvr") or (target not in mods and target.rpartition(".")[0] in mods):
                continue  # a third-party module, or `from pkg import name` where name is not a module
            if target not in mods or (line, target) in seen:
                continue
            seen.add((line, target))
            trank, tprefix = layer_of(target)
            if module.startswith(COMPONENTS) and target.startswith(COMPONENTS) and tprefix != own:
                bad.append(f"{path.relative_to(ROOT)}:{line}: component {module} imports component {target}")
            elif trank > rank:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} ({LAYERS[rank][0]}) imports {target} ({LAYERS[trank][0]})")
    return bad


def test_every_module_is_in_a_layer():
    for module in library_modules():
        layer_of(module)


def test_imports_point_down_only():
    assert violations() == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "rlvr.store.run",
            "def f():\n    from rlvr.checks import preflight\n",
            "rlvr.store.run (store) imports rlvr.checks.preflight (checks)",
        ),
        ("rlvr.problems.prompts", "def f():\n    from rlvr.models import tiny\n", "imports rlvr.models.tiny (models)"),
        (
            "rlvr.rollout.engines",
            "from rlvr.train import update\n",
            "component rlvr.rollout.engines imports component rlvr.train.update",
        ),
        ("rlvr.store.retention", "def f():\n    import prefect\n", "imports prefect"),
        ("rlvr.train.update", "def f():\n    from rlvr.store.commit import begin_stage\n", "commits to the store"),
    ],
)
def test_the_walk_catches_function_level_cycles(tmp_path, monkeypatch, module, source, expected):
    """Each of the cycles this rule was written against, planted in a copy of the module, is reported."""
    mods = library_modules()
    planted = tmp_path / "planted.py"
    planted.write_text(mods[module].read_text() + "\n\n" + source)
    monkeypatch.setattr(sys.modules[__name__], "library_modules", lambda: {**mods, module: planted})
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert any(expected in v for v in violations()), violations()
