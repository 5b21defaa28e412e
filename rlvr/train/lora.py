"""LoRA training ([update.lora]): the trainable adapter model an update steps, and the checkpoint it ends in.

`trainable_policy(v_i)` gives PEFT's LoraModel over the frozen base v0 (Hu et al. 2021,
arXiv:2106.09685): for v0 a fresh adapter (A random from the given seed, B = 0, so v1's first
forward equals v0's), for an adapter version the same adapter loaded trainable. It returns the
PeftModel (what the optimiser and the checkpoint see) and the transformers model with LoRA layers
injected in place (what the step loop runs: rlvr.train.logprobs calls its decoder and LM head as it
does a plain model's). Only the adapter's parameters require grad, so AdamW's state, and the
trainer_state.pt of every checkpoint, hold the adapter's moments only.

`save_adapter` writes the folder rlvr.models.lora reads: adapter_model.safetensors,
adapter_config.json (base_model_name_or_path = the base's path relative to the folder), the base's
config.json and BASE_REF (the base's path and sha256). Nothing in it depends on where the run lives,
so a killed and resumed run writes the same bytes as an uninterrupted one.

Test: tests/integration/test_lora.py.
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

import torch
from transformers import AutoTokenizer, PreTrainedModel

from rlvr.config import ConfigError, LoraSection
from rlvr.models.load import load_policy
from rlvr.models.lora import base_of, is_adapter, write_base_ref
from rlvr.schema import ADAPTER_WEIGHTS

ADAPTER = "default"  # PEFT's adapter name; one adapter per policy


def lora_config(cfg: LoraSection):
    from peft import LoraConfig

    targets = "all-linear" if cfg.target_modules == ["all-linear"] else list(cfg.target_modules)
    return LoraConfig(r=cfg.r, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout, target_modules=targets, task_type="CAUSAL_LM")


def _linear_names(model: torch.nn.Module) -> list[str]:
    return sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)})


def trainable_policy(
    path: Path, cfg: LoraSection, *, device: torch.device, seed: int, input_grads: bool = False
) -> tuple[torch.nn.Module, AutoTokenizer, PreTrainedModel]:
    """(PeftModel, tokenizer, the injected transformers model) for training from policy folder
    `path`: v0 (full weights) gets a fresh adapter initialised from `seed`; an adapter folder is
    loaded onto its checked base. `input_grads`: make the embeddings' output require grad, which
    reentrant gradient checkpointing needs when every weight below the first adapter is frozen."""
    from peft import PeftModel, get_peft_model

    base_dir = base_of(path) if is_adapter(path) else Path(path)
    base, _ = load_policy(base_dir, device)
    if is_adapter(path):
        peft = PeftModel.from_pretrained(base, str(path), adapter_name=ADAPTER, is_trainable=True)
    else:
        with torch.random.fork_rng(devices=[]):  # the init draws from its own seed, not the run's RNG stream
            torch.manual_seed(seed)
            try:
                peft = get_peft_model(base, lora_config(cfg), adapter_name=ADAPTER)
            except ValueError as exc:
                if "not found in the base model" not in str(exc):
                    raise
                raise ConfigError(
                    f"update.lora.target_modules = {cfg.target_modules}: {exc}. This model's linear layers are "
                    f"named {', '.join(_linear_names(base))}"
                ) from None
    peft.peft_config[ADAPTER].base_model_name_or_path = str(base_dir.absolute())  # save_adapter makes it relative
    if input_grads:
        peft.enable_input_require_grads()
    return peft, AutoTokenizer.from_pretrained(path), peft.get_base_model()


def is_peft(model: torch.nn.Module) -> bool:
    """Whether `model` is a PEFT model (checked without importing peft when nothing did)."""
    if "peft" not in sys.modules:
        return False
    from peft import PeftModel

    return isinstance(model, PeftModel)


def save_adapter(peft: torch.nn.Module, path: Path) -> None:
    """The adapter's checkpoint folder (without tokenizer and trainer state, which the caller writes)."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    path.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().cpu().contiguous() for k, v in get_peft_model_state_dict(peft, adapter_name=ADAPTER).items()}
    save_file(weights, str(path / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    conf = copy.deepcopy(peft.peft_config[ADAPTER])
    base = Path(conf.base_model_name_or_path)
    conf.base_model_name_or_path = os.path.relpath(base, path.absolute())
    conf.inference_mode = True  # as PEFT's own save_pretrained writes it
    if isinstance(conf.target_modules, set):  # PEFT keeps a set, whose order changes with each process's hash seed
        conf.target_modules = sorted(conf.target_modules)
    conf.save_pretrained(str(path))
    peft.get_base_model().config.save_pretrained(path)  # the base's architecture: context length, vocabulary
    write_base_ref(path, base)
