"""The micro-batch layout an update runs with: update.micro_batch_tokens and update.packing on "auto".

On the CPU, auto is what was measured fastest there: 512 tokens a micro-batch (bench/loop.py: 512
beat 256 and 2048) in right-padded rows (15% faster than packed with sdpa, bench/update.py). The
same bytes as before "auto" existed.

On CUDA a micro-batch is a whole forward and backward of kernel launches, so a small one leaves the
GPU waiting on the host. The budget is the most tokens the free memory holds after the update's own
state, by a formula on the model's shape:

    budget = pow2_floor((HEADROOM * free - pending - head) / per_token), within [MIN_TOKENS, MAX_TOKENS]

    free       torch.cuda.mem_get_info() on the update's device once the weights are loaded (a vLLM
               engine on the same GPU already holds its share)
    pending    state the step has still to allocate: gradients (4 bytes a trainable parameter) and,
               while the optimiser has no state yet, AdamW's two moments (8 more)
    head       one LM-head chunk's fp32 logits, softmax and gradient: 16 * HEAD_CHUNK_TOKENS * V
    per_token  what one token keeps for backward: layers * (10 h + 4 i) * e for the decoder (h the
               hidden width, i the MLP's; e = 4 bytes in fp32, 2 under bf16 autocast) plus the 4 h
               bytes of its final hidden state; with gradient checkpointing, layers * h * e plus one
               layer's full set
    HEADROOM   0.7: the caching allocator's fragmentation, cuBLAS workspaces and the temporaries
               the count leaves out

The power of two keeps the budget the same under small changes of free memory, so a stage redone on
the same card cuts the same micro-batches. Under torchrun every rank takes the smallest budget of
all ranks: Dist.share hands out micro-batches by position, so all ranks must cut the same ones.
Sequences longer than the budget still get a micro-batch of their own.

Packing on auto: padding-free rows only where attention is varlen, which is flash-attn on CUDA
(the policy loaded as flash_attention_2, which needs bf16); anywhere else right-padded rows with
sdpa. transformers' sdpa path honours packed rows too, through a block-diagonal mask, but with no
saving over padding.

An int (or true / false) in the config is used as it is: set one for a run whose bytes must not
depend on the card's free memory.

Tests: tests/unit/train/test_budget.py (the formula's table), tests/integration/test_budget.py (auto on
the CPU is the old layout, byte for byte).
"""

from __future__ import annotations

import importlib.util

import torch
from torch.distributed.tensor import DTensor

from rlvr.config import UpdateSection
from rlvr.train.distributed import Dist
from rlvr.train.logprobs import HEAD_CHUNK_TOKENS

CPU_TOKENS = 512
MIN_TOKENS = 512
MAX_TOKENS = 65536  # beyond this a step is a handful of micro-batches: no launch time left to win
HEADROOM = 0.7
FLASH = "flash_attention_2"


def per_token_bytes(*, hidden: int, intermediate: int, layers: int, bf16: bool, checkpointing: bool) -> int:
    """Bytes one token of a micro-batch keeps for backward (the module docstring's per_token)."""
    e = 2 if bf16 else 4
    layer = (10 * hidden + 4 * intermediate) * e
    decoder = layers * hidden * e + layer if checkpointing else layers * layer
    return decoder + 4 * hidden


def head_bytes(vocab: int) -> int:
    """One LM-head chunk's logits, softmax and their gradient, in fp32."""
    return 16 * HEAD_CHUNK_TOKENS * vocab


def pow2_floor(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n >= 1 else 0


def cuda_budget(*, free: int, pending: int, head: int, per_token: int) -> int:
    """The micro-batch token budget that `free` bytes hold (the module docstring's formula)."""
    room = int(HEADROOM * free) - pending - head
    return min(MAX_TOKENS, max(MIN_TOKENS, pow2_floor(room // per_token)))


def attention_for(u: UpdateSection, device: torch.device) -> str | None:
    """The attention implementation the trainer loads the policy with: flash_attention_2 where
    packing may use it (packing not off, bf16 on CUDA, flash-attn installed), else the model's default."""
    if u.packing is False or not u.bf16 or device.type != "cuda":
        return None
    return FLASH if has_flash_attn() else None


def has_flash_attn() -> bool:
    return importlib.util.find_spec("flash_attn") is not None


def _hf_config(model: torch.nn.Module):
    """The transformers config of a policy, a PeftModel, or ResponseLogprobs around one."""
    for m in model.modules():
        if hasattr(m, "config") and hasattr(m.config, "hidden_size"):
            return m.config
    raise ValueError(f"{type(model).__name__} has no transformers config with hidden_size")


def _local_numel(p: torch.Tensor) -> int:
    return p.to_local().numel() if isinstance(p, DTensor) else p.numel()


def resolve_layout(cfg: UpdateSection, model: torch.nn.Module, optimizer: torch.optim.Optimizer, dist: Dist) -> UpdateSection:
    """cfg with micro_batch_tokens and packing as they will run: a set value as it is, "auto" by the
    device (the module docstring)."""
    device = next(model.parameters()).device
    conf = _hf_config(model)
    packing = cfg.packing if cfg.packing != "auto" else getattr(conf, "_attn_implementation", None) == FLASH
    tokens = cfg.micro_batch_tokens
    if tokens == "auto" and device.type != "cuda":
        tokens = CPU_TOKENS
    elif tokens == "auto":
        free, _ = torch.cuda.mem_get_info(device)
        tokens = int(dist.min(auto_tokens(cfg, model, optimizer, free)))
    return cfg.model_copy(update={"micro_batch_tokens": tokens, "packing": packing})


def auto_tokens(cfg: UpdateSection, model: torch.nn.Module, optimizer: torch.optim.Optimizer, free: int) -> int:
    """The CUDA budget for this model, optimiser and `free` bytes (the module docstring's formula)."""
    conf = _hf_config(model)
    trainable = sum(_local_numel(p) for p in model.parameters() if p.requires_grad)
    per_token = per_token_bytes(
        hidden=conf.hidden_size,
        intermediate=getattr(conf, "intermediate_size", 4 * conf.hidden_size),
        layers=conf.num_hidden_layers,
        bf16=cfg.bf16,
        checkpointing=cfg.gradient_checkpointing,
    )
    pending = trainable * (4 if optimizer.state else 12)
    return cuda_budget(free=free, pending=pending, head=head_bytes(conf.vocab_size), per_token=per_token)
