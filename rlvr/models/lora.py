"""LoRA adapter folders: the base-model reference they carry, and folding one into its base.

A LoRA run's policy/vN (N >= 1) holds an adapter, not full weights (DESIGN.md, "LoRA adapters"):
PEFT's adapter_config.json and adapter_model.safetensors, the base's config.json and tokenizer, and
BASE_REF, which names the base the adapter was trained on: a path relative to the folder
(`../v000000`, the run's v0) and the sha256 of each of the base's weight files. `base_of` is the
one reader of that reference and checks the digests (each file hashed once per process,
rlvr.files.cached_sha256), so an adapter is never applied to weights other than its own base's.

`merge_adapter` is what rlvr.models.load.load_policy does with such a folder: base + adapter merged
into plain weights (PEFT's merge_and_unload: W + (alpha / r) B A), the model rollout, evaluate and
export use. The trainer builds an unmerged, trainable one instead (rlvr.train.lora).

Test: tests/integration/test_lora.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.files import cached_sha256
from rlvr.schema import ADAPTER_CONFIG, BASE_REF


class AdapterBaseError(RlvrError, ValueError):
    """An adapter folder whose base model is missing or is not the one it was trained on."""


def is_adapter(folder: Path) -> bool:
    return (Path(folder) / ADAPTER_CONFIG).is_file()


def adapter_rank(folder: Path) -> int:
    """The adapter's rank r (adapter_config.json), 0 for a full-weights folder."""
    if not is_adapter(folder):
        return 0
    return int(json.loads((Path(folder) / ADAPTER_CONFIG).read_text())["r"])


def base_reference(base: Path, folder: Path) -> dict:
    """BASE_REF's content for an adapter written to `folder` on the base model at `base`: the
    base's path relative to the folder (so a run keeps it when moved, and two runs' bytes agree)
    and the sha256 of its weight files."""
    weights = sorted(Path(base).glob("*.safetensors"))
    if not weights:
        raise AdapterBaseError(f"{base} has no *.safetensors: a LoRA base must be a folder of safetensors weights")
    return {
        "path": os.path.relpath(Path(base).absolute(), Path(folder).absolute()),
        "weights": {p.name: cached_sha256(p) for p in weights},
    }


def write_base_ref(folder: Path, base: Path) -> None:
    (Path(folder) / BASE_REF).write_text(json.dumps(base_reference(base, folder), indent=2, sort_keys=True) + "\n")


def base_of(folder: Path) -> Path:
    """The base model folder an adapter folder refers to, checked: it exists and its weight files
    have the sha256 the adapter recorded. AdapterBaseError otherwise, naming the file."""
    folder = Path(folder)
    ref_path = folder / BASE_REF
    if not ref_path.is_file():
        raise AdapterBaseError(
            f"{folder} holds a LoRA adapter ({ADAPTER_CONFIG}) but no {BASE_REF}: rlvr cannot tell which base it adapts; "
            "rewrite it with rlvr (or load it yourself with peft.PeftModel.from_pretrained(base, folder))"
        )
    ref = json.loads(ref_path.read_text())
    base = (folder / ref["path"]).resolve()
    if not base.is_dir():
        raise AdapterBaseError(f"{ref_path}: its base model {base} does not exist (path {ref['path']!r}, relative to {folder})")
    for name, sha in sorted(ref["weights"].items()):
        f = base / name
        if not f.is_file():
            raise AdapterBaseError(f"{ref_path}: the base model's weight file {f} is missing")
        if cached_sha256(f) != sha:
            raise AdapterBaseError(
                f"{ref_path}: the base model's {f} has sha256 {cached_sha256(f)[:16]}..., not the {sha[:16]}... the adapter "
                "was trained on; the adapter only fits its own base: restore that file (`rlvr verify-store RUN` checks a run)"
            )
    return base


def merge_adapter(base_model, folder: Path):
    """`base_model` (loaded from base_of(folder)) with the adapter of `folder` merged into its
    weights: a plain transformers model, no PEFT layers left."""
    from peft import PeftModel

    return PeftModel.from_pretrained(base_model, str(folder)).merge_and_unload()
