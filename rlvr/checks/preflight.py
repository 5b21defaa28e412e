"""Checks made before a run starts: everything that would otherwise fail 15 s later inside a
Prefect task, as a traceback, after the run folder was created.

`check_start(cfg, run_dir)` runs before the run folder is created (rlvr.store.run.create_or_open) and
before Prefect starts (the CLI): the model folder is a loadable HF model with a tokenizer, the
task's problems can be built, the folder's parent is writable, and the disk holds v0 and the
first checkpoint. Each failure is one `PreflightError` line that names the file or field.

Tests: tests/unit/checks/test_preflight.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rlvr.config import Config
from rlvr.errors import DiskSpaceError, RlvrError
from rlvr.models.registry import model_folder

WEIGHT_GLOBS = ("*.safetensors", "pytorch_model*.bin", "*.gguf")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


class PreflightError(RlvrError):
    """The run cannot start as configured; the message names the file or field to fix."""


def check_model(path: Path) -> list[str]:
    """Raise PreflightError unless `path` is a HF-format causal LM folder whose config and
    tokenizer load; returns notes worth printing (no chat template: prompts go in as plain text)."""
    where = f"model.path = {str(path)!r}"
    if not path.exists():
        raise PreflightError(
            f"{where} does not exist; point it at a HF-format model folder (config.json, *.safetensors, tokenizer)"
        )
    if not path.is_dir():
        raise PreflightError(f"{where} is a file, not a folder; point it at the HF-format folder that holds config.json")
    conf_path = path / "config.json"
    if not conf_path.is_file():
        raise PreflightError(f"{where} has no config.json: it is not a HF-format model folder (save one with save_pretrained)")
    try:
        conf = json.loads(conf_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise PreflightError(f"{conf_path} is not valid JSON ({err}); restore it from the model's original files") from None
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    model_type = conf.get("model_type") if isinstance(conf, dict) else None
    if not model_type:
        raise PreflightError(
            f'{conf_path} has no "model_type": it is not a transformers model config (e.g. "model_type": "llama")'
        )
    if model_type not in CONFIG_MAPPING_NAMES:
        raise PreflightError(
            f"{conf_path}: model_type {model_type!r} is unknown to this transformers; upgrade it or use another model"
        )
    if not any(next(path.glob(g), None) for g in WEIGHT_GLOBS):
        raise PreflightError(f"{where} has no weights (*.safetensors or pytorch_model*.bin); copy them next to config.json")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise PreflightError(f"{where} has no tokenizer ({', '.join(TOKENIZER_FILES)}); save it with tokenizer.save_pretrained")
    return _check_tokenizer(path, where)


def _check_tokenizer(path: Path, where: str) -> list[str]:
    from transformers import AutoTokenizer

    from rlvr.problems.prompts import chat_text

    try:
        tok = AutoTokenizer.from_pretrained(path)
    except Exception as err:
        first = (str(err).strip().splitlines() or [""])[0][:200]
        raise PreflightError(f"{where}: its tokenizer does not load ({type(err).__name__}: {first})") from None
    if not tok.chat_template:
        return [f"{where} has no chat template: prompts are given to the model as plain text"]
    try:
        chat_text(tok, [{"role": "user", "content": "1 + 1?"}])
    except Exception as err:
        first = (str(err).strip().splitlines() or [""])[0][:200]
        raise PreflightError(f"{where}: its chat template fails on a user message ({type(err).__name__}: {first})") from None
    return []


def check_task(cfg: Config) -> None:
    """The configured task(s) and datasets build their problems (shipped data files present, counts
    possible, every own row valid: rlvr.problems.datasets names the file, row and column of a bad one)."""
    from rlvr.problems.datasets import load_problems

    what = f"task.name = {cfg.task.name!r}" if cfg.task.name else "the task's datasets"
    try:
        rows = load_problems(cfg.task, cfg.prompt)
    except (FileNotFoundError, ImportError) as err:
        raise PreflightError(f"{what}: its data cannot be read ({err})") from None
    if not any(r["split"] == "train" for r in rows):
        raise PreflightError(f"{what} yields no training problems; raise task.n_train")
    check_heldout(cfg, rows)
    if any(r["task"] == "code" for r in rows):
        from rlvr.verify.code import sandbox_problem

        if (problem := sandbox_problem()) is not None:
            raise PreflightError(f"{what} has code problems, and {problem}")


def check_heldout(cfg: Config, rows: list[dict]) -> None:
    """eval.every > 0 evaluates on the held-out split: it must have problems (else the first
    evaluate stage would fail, after prepare and iteration 0 are written)."""
    if cfg.eval.every > 0 and not any(r["split"] == "test" for r in rows):
        raise PreflightError(
            f"eval.every = {cfg.eval.every} but the task has no held-out problems (split = 'test'): set task.n_test > 0 "
            "(own datasets: test rows in the split column, or test_fraction > 0), or set eval.every = 0"
        )


def check_device(cfg: Config) -> None:
    """update.device names a device this machine has (rlvr.models.load.resolve_device's ConfigError if not)."""
    from rlvr.models.load import resolve_device

    resolve_device(cfg.update.device)


def check_precision(cfg: Config) -> list[str]:
    """A note when the trainer runs under bf16 autocast while rollout samples in float32: on SmolLM2 that
    mix collapsed learning, where bf16 on both sides learned (docs/guide/gpu.md, "bf16 on a GPU")."""
    r = cfg.rollout
    if not cfg.update.bf16 or (r.engine != "transformers" and r.vllm_dtype == "bfloat16"):
        return []
    sampler = (
        "the transformers engine samples in float32" if r.engine == "transformers" else f"rollout.vllm_dtype = {r.vllm_dtype!r}"
    )
    return [
        f"update.bf16 = true trains under bf16 autocast while {sampler}: on SmolLM2 this mix collapsed learning "
        "(held-out 0.30 -> 0.09 in 30 minutes), where bf16 on both sides learned (0.33 -> 0.43); sample in bf16 too "
        '(the vLLM engine with rollout.vllm_dtype = "bfloat16"), or set update.bf16 = false'
    ]


def existing_ancestor(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_writable(run_dir: Path) -> None:
    """The run folder can be created and written (the nearest existing folder on its path)."""
    base = existing_ancestor(run_dir)
    if not base.is_dir():
        raise PreflightError(f"cannot create run folder {run_dir}: {base} is a file, not a folder; choose another --run")
    if not os.access(base, os.W_OK | os.X_OK):  # EROFS even for root; EACCES for others
        raise PreflightError(
            f"cannot write run folder {run_dir}: {base} is not writable (read-only disk or permissions); choose another --run"
        )


def model_bytes(path: Path) -> int:
    return sum(f.stat().st_size for g in WEIGHT_GLOBS for f in path.glob(g))


def check_disk(cfg: Config, run_dir: Path) -> None:
    """Free space for what the first iteration writes: policy v0 (the weights, as fp32) and v1
    (weights + AdamW's two moments, twice the weights). The embedded tiny model needs little."""
    folder = model_folder(cfg)
    if folder is None:
        return
    weights = model_bytes(folder)
    # bf16/fp16 files are saved as fp32 by prepare: count 4 bytes a parameter either way
    conf = json.loads((folder / "config.json").read_text())
    dtype = conf.get("dtype") or conf.get("torch_dtype") or "float32"  # transformers 5 | 4
    fp32 = weights * (2 if str(dtype) in ("bfloat16", "float16") else 1)
    needed = fp32 + 3 * fp32
    base = existing_ancestor(run_dir)
    free = shutil.disk_usage(base).free
    if free < needed:
        from rlvr.progress import fmt_bytes

        raise DiskSpaceError(
            f"not enough free disk for run folder {run_dir}: policy v0 and the first checkpoint need about {fmt_bytes(needed)}, "
            f"{fmt_bytes(free)} free on {base}.\nFree some space or choose a --run folder on another disk"
        )


def check_rewards(cfg: Config) -> None:
    """Every reward plug-in loads: a Python one imports and names a function, a SQL one's file exists
    (a RewardPluginError naming the plug-in), so a broken one fails here, not after a whole rollout,
    and leaves no run folder frozen with it."""
    if not cfg.verify.rewards:
        return
    from rlvr.verify.plugins import load_function, source_digest  # only then: it imports DuckDB

    for p in cfg.verify.rewards:
        source_digest(p)
        if p.python is not None:
            load_function(p.python, p.name)


def check_start(cfg: Config, run_dir: Path) -> list[str]:
    """Every check a first start can make before it writes anything; returns notes to print."""
    folder = model_folder(cfg)
    notes = (check_model(folder) if folder is not None else []) + check_precision(cfg)
    check_rewards(cfg)
    check_task(cfg)
    check_device(cfg)
    check_writable(run_dir)
    check_disk(cfg, run_dir)
    return notes
