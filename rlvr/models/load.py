"""Loading a policy folder onto a device: the one place the trainer, rollout and evaluate load weights."""

from __future__ import annotations

import threading
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from rlvr.config import ConfigError


def resolve_device(name: str) -> torch.device:
    """update.device as a torch device: auto = cuda when torch sees one, else cpu. A ConfigError
    (a user error, not a bug) for 'cuda' on a machine, or a torch build, without CUDA."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f'update.device = "cuda" but torch.cuda.is_available() is False (torch {torch.__version__}): set '
            'update.device = "auto" or "cpu", or install a CUDA build of torch'
        )
    return torch.device(name)


# transformers builds a model on the meta device through process-global state while it loads, so two
# loads at once (rollout.max_staleness >= 1 runs a rollout's engine and the update in two threads)
# crashed with "Cannot copy out of meta tensor". One load at a time; the loads are seconds, the stages minutes.
_LOADING = threading.Lock()


def load_policy(path: Path, device: torch.device) -> tuple[PreTrainedModel, AutoTokenizer]:
    with _LOADING:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device)
        return model, AutoTokenizer.from_pretrained(path)
