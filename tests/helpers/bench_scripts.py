"""Import a bench/ script as a module (bench/ is a folder of scripts, not a package), for the tests
that check a benchmark's parts: `bench_module("loop")` is bench/loop.py."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers import ROOT

BENCH = ROOT / "bench"


def bench_module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:  # a script imports its neighbours (bench/machine.py) as top-level modules
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = mod  # dataclasses in the script look their module up here
    spec.loader.exec_module(mod)
    return mod
