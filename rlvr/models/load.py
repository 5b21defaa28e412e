"""Loading a policy folder onto a device: the one place the trainer, rollout and evaluate load weights."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from rlvr.config import ConfigError
from rlvr.models.lora import base_of, is_adapter, merge_adapter

DEVICE_ENV = "RLVR_DEVICE"  # this machine's device for the stages it runs (`rlvr worker --device`): overrides update.device


def resolve_device(name: str) -> torch.device:
    """update.device as a torch device: auto = cuda when torch sees one, else cpu. $RLVR_DEVICE, when
    set (`rlvr worker --device cuda` sets it), replaces update.device on this machine only: the run's
    config and hash stay as they are, and the record of each stage says which device made it. A
    ConfigError (a user error, not a bug) for 'cuda' on a machine, or a torch build, without CUDA."""
    source = "update.device"
    if override := os.environ.get(DEVICE_ENV):
        if override not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"{DEVICE_ENV}={override!r}: use auto, cpu or cuda (or unset it to use update.device)")
        name, source = override, DEVICE_ENV
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f'{source} = "cuda" but torch.cuda.is_available() is False (torch {torch.__version__}): set '
            f'{source} = "auto" or "cpu", or install a CUDA build of torch'
        )
    return torch.device(name)


# transformers builds a model on the meta device through process-global state while it loads, so two
# loads at once (rollout.max_staleness >= 1 runs a rollout's engine and the update in two threads)
# crashed with "Cannot copy out of meta tensor". One load at a time; the loads are seconds, the stages minutes.
_LOADING = threading.Lock()


def load_policy(path: Path, device: torch.device, *, attention: str | None = None) -> tuple[PreTrainedModel, AutoTokenizer]:
    """A policy folder as a transformers model (fp32) and its tokenizer. A LoRA adapter folder
    (rlvr.models.lora) is loaded onto its checked base and merged: full weights either way.
    `attention`: transformers' attn_implementation (None: the model's default, sdpa)."""
    with _LOADING:
        if is_adapter(path):
            model = merge_adapter(_full_weights(base_of(path), device, attention), path)
        else:
            model = _full_weights(path, device, attention)
        return model, AutoTokenizer.from_pretrained(path)


def _full_weights(path: Path, device: torch.device, attention: str | None = None) -> PreTrainedModel:
    kw = {"attn_implementation": attention} if attention else {}
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kw).to(device)
