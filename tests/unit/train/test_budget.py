"""The micro-batch layout on "auto" (rlvr.train.budget): the formula by hand, the CPU default, the
attention choice. The CUDA budget is computed here from a given free memory; no GPU is needed."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from rlvr.config import UpdateSection
from rlvr.train import budget
from rlvr.train.distributed import Dist

GB = 10**9
SMOL = {"hidden": 576, "intermediate": 1536, "layers": 30}  # SmolLM2-135M
QWEN = {"hidden": 1536, "intermediate": 8960, "layers": 28}  # Qwen2.5-1.5B


@pytest.mark.parametrize(
    ("shape", "bf16", "checkpointing", "expected"),
    [
        # layers * (10 h + 4 i) * e + 4 h
        (SMOL, False, False, 30 * (5760 + 6144) * 4 + 2304),
        (SMOL, True, False, 30 * (5760 + 6144) * 2 + 2304),
        # checkpointing: layers * h * e + one layer's (10 h + 4 i) * e, + 4 h
        (SMOL, False, True, 30 * 576 * 4 + (5760 + 6144) * 4 + 2304),
        (QWEN, False, False, 28 * (15360 + 35840) * 4 + 6144),
        (QWEN, True, True, 28 * 1536 * 2 + (15360 + 35840) * 2 + 6144),
    ],
)
def test_per_token_bytes(shape: dict, bf16: bool, checkpointing: bool, expected: int) -> None:
    assert budget.per_token_bytes(**shape, bf16=bf16, checkpointing=checkpointing) == expected


@pytest.mark.parametrize(
    ("free", "pending", "head", "per_token", "expected"),
    [
        (10_000_000, 0, 0, 1000, 4096),  # 0.7 * 1e7 / 1000 = 7000 -> the power of two below
        (10_000_000, 1_000_000, 0, 1000, 4096),  # 6000
        (10_000_000, 3_000_000, 0, 1000, 2048),  # 4000
        (10_000_000, 0, 6_000_000, 1000, 512),  # 1000: below the floor
        (10_000_000, 8_000_000, 0, 1000, 512),  # no room at all: the floor still
        (10**12, 0, 0, 1000, 65536),  # the ceiling
    ],
)
def test_cuda_budget(free: int, pending: int, head: int, per_token: int, expected: int) -> None:
    assert budget.cuda_budget(free=free, pending=pending, head=head, per_token=per_token) == expected


def test_cuda_budget_is_stable_under_small_changes_of_free_memory() -> None:
    got = {budget.cuda_budget(free=int(50 * GB * f), pending=2 * GB, head=GB, per_token=1_430_784) for f in (0.95, 1.0, 1.05)}
    assert got == {16384}  # 0.7 * 50 GB - 3 GB over 1.43 MB: 21-23k tokens


@pytest.mark.parametrize(
    ("shape", "params", "vocab", "bf16", "expected"),
    [
        # 79 GB free on an 80 GB card: SmolLM2 in fp32 holds 37k tokens; bf16 reaches the ceiling
        (SMOL, 135_000_000, 49152, False, 32768),
        (SMOL, 135_000_000, 49152, True, 65536),
        # Qwen2.5-1.5B: 18.5 GB of gradients and AdamW state and a 2.5 GB head chunk come first
        (QWEN, 1_540_000_000, 151936, False, 4096),
        (QWEN, 1_540_000_000, 151936, True, 8192),
    ],
)
def test_budgets_of_known_shapes_on_an_80gb_card(shape: dict, params: int, vocab: int, bf16: bool, expected: int) -> None:
    got = budget.cuda_budget(
        free=79 * GB,
        pending=12 * params,
        head=budget.head_bytes(vocab),
        per_token=budget.per_token_bytes(**shape, bf16=bf16, checkpointing=False),
    )
    assert got == expected


def _tiny() -> LlamaForCausalLM:
    torch.manual_seed(0)
    conf = LlamaConfig(
        vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4
    )
    return LlamaForCausalLM(conf)


def test_auto_tokens_counts_the_optimisers_state_once_it_exists() -> None:
    model = _tiny()
    opt = torch.optim.AdamW(model.parameters())
    n = sum(p.numel() for p in model.parameters())
    per_token = budget.per_token_bytes(hidden=32, intermediate=64, layers=2, bf16=False, checkpointing=False)
    head = budget.head_bytes(256)
    # free memory sized so that the 8 bytes a parameter of AdamW's moments decide between two budgets
    free = int((head + 12 * n + 1024 * per_token) / budget.HEADROOM) + 1
    cfg = UpdateSection()
    assert budget.auto_tokens(cfg, model, opt, free) == 1024
    model(torch.tensor([[1, 2, 3]])).logits.sum().backward()
    opt.step()
    assert opt.state  # the moments now exist: only the gradients are still to come
    assert budget.auto_tokens(cfg, model, opt, free) == budget.pow2_floor(1024 + 8 * n // per_token)


def test_auto_on_the_cpu_is_the_measured_layout() -> None:
    model = _tiny()
    opt = torch.optim.AdamW(model.parameters())
    got = budget.resolve_layout(UpdateSection(), model, opt, Dist())
    assert (got.micro_batch_tokens, got.packing) == (budget.CPU_TOKENS, False)
    set_ = budget.resolve_layout(UpdateSection(micro_batch_tokens=40, packing=True), model, opt, Dist())
    assert (set_.micro_batch_tokens, set_.packing) == (40, True)


def test_auto_packs_a_policy_loaded_with_flash_attention() -> None:
    model = _tiny()
    model.config._attn_implementation = budget.FLASH  # as a flash_attention_2 load leaves it
    got = budget.resolve_layout(UpdateSection(), model, torch.optim.AdamW(model.parameters()), Dist())
    assert got.packing is True


@pytest.mark.parametrize(
    ("device", "bf16", "packing", "flash", "expected"),
    [
        ("cuda", True, "auto", True, budget.FLASH),
        ("cuda", True, True, True, budget.FLASH),
        ("cuda", True, False, True, None),  # padded on request: no reason to change attention
        ("cuda", False, "auto", True, None),  # flash-attn runs in half precision only
        ("cuda", True, "auto", False, None),  # not installed: sdpa, padded
        ("cpu", True, "auto", True, None),
    ],
)
def test_attention_for(
    monkeypatch: pytest.MonkeyPatch, device: str, bf16: bool, packing: bool | str, flash: bool, expected: str | None
) -> None:
    monkeypatch.setattr(budget, "has_flash_attn", lambda: flash)
    assert budget.attention_for(UpdateSection(bf16=bf16, packing=packing), torch.device(device)) == expected
