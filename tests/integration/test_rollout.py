"""The transformers rollout engine on the real tiny model."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from rlvr.config import Config, ConfigError, RolloutSection
from rlvr.models.load import load_policy
from rlvr.problems.prompts import chat_ids
from rlvr.rollout.sampler import Request, Sampling, generate_transformers, sample_batch
from rlvr.seeds import derive_seed

PROMPTS = [
    "What is 3 + 4? Put the final answer inside <answer></answer>.",
    "What is 12 - 15? Put the final answer inside <answer></answer>.",
]


def _requests(tok, g: int = 4) -> list[Request]:
    return [Request(f"p{k}", s, chat_ids(tok, p), derive_seed(0, 0, f"p{k}", s)) for k, p in enumerate(PROMPTS) for s in range(g)]


def test_seed_depends_on_all_four_parts() -> None:
    base = derive_seed(0, 1, "p", 2)
    assert (
        len({base, derive_seed(1, 1, "p", 2), derive_seed(0, 2, "p", 2), derive_seed(0, 1, "q", 2), derive_seed(0, 1, "p", 3)})
        == 5
    )
    assert base == derive_seed(0, 1, "p", 2) and 0 <= base < 2**63


def test_chat_template_is_applied(tiny_model: Path) -> None:
    _, tok = load_policy(tiny_model, torch.device("cpu"))
    text = tok.decode(chat_ids(tok, "hi"))
    assert text == "<|user|>hi<|end|><|assistant|>"


def test_samples_are_well_formed_and_independent_of_batching(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    reqs = _requests(tok)
    sampling = Sampling(max_new_tokens=12, temperature=1.0, top_p=1.0)
    together = [x for b in generate_transformers(model, tok, reqs, sampling=sampling, batch_size=8) for x in b]
    alone = [x for b in generate_transformers(model, tok, reqs, sampling=sampling, batch_size=1) for x in b]
    assert len(together) == 8
    by_key = {(r.prompt_id, r.sample_idx): s for r, s in alone}
    for req, smp in together:
        assert smp.token_ids == by_key[(req.prompt_id, req.sample_idx)].token_ids  # same seed, same sample
        assert len(smp.logprobs) == len(smp.token_ids) and all(lp <= 0 for lp in smp.logprobs)
        if smp.finish_reason == "stop":
            assert smp.token_ids[-1] == tok.eos_token_id
        else:
            assert len(smp.token_ids) == 12 and tok.eos_token_id not in smp.token_ids
    assert len({tuple(s.token_ids) for _, s in together}) > 1  # sampling really samples


def test_recorded_logprobs_match_a_full_forward(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    (smp,) = sample_batch(
        model,
        [chat_ids(tok, PROMPTS[0])],
        [7],
        sampling=Sampling(8, 0.8, 1.0),
        eos_ids={tok.eos_token_id},
        pad_id=tok.pad_token_id,
    )
    prompt = chat_ids(tok, PROMPTS[0])
    ids = torch.tensor([prompt + smp.token_ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1] / 0.8, -1)  # (T-1, V)
    expect = [logp[len(prompt) - 1 + t, tok_id].item() for t, tok_id in enumerate(smp.token_ids)]
    assert torch.allclose(torch.tensor(smp.logprobs), torch.tensor(expect), atol=1e-4)


def test_greedy_matches_transformers_generate(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    prompt = chat_ids(tok, PROMPTS[1])
    (smp,) = sample_batch(
        model, [prompt], [0], sampling=Sampling(10, 0.0, 1.0), eos_ids={tok.eos_token_id}, pad_id=tok.pad_token_id
    )
    ref = model.generate(
        torch.tensor([prompt]),
        attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
        max_new_tokens=10,
        do_sample=False,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    assert smp.token_ids == ref[0, len(prompt) :].tolist()


def test_vllm_settings_come_from_rollout_and_key_the_live_engine() -> None:
    """Every rollout.vllm_* setting reaches the engine's start command, and a live engine is reused only
    for the same settings (a bfloat16 engine is not the float32 one)."""
    from rlvr.rollout.engines import VLLMSettings

    cfg = RolloutSection(
        python="/venv/bin/python",
        vllm_dtype="bfloat16",
        vllm_tensor_parallel_size=2,
        vllm_gpu_memory_utilization=0.6,
        vllm_enforce_eager=False,
        vllm_kv_cache_gib=8,
    )
    s = VLLMSettings.of(cfg, model_max_len=2048)
    msg = s.start_message(Path("/m"), seed=7)
    assert msg == {
        "cmd": "start",
        "model": "/m",
        "seed": 7,
        "dtype": "bfloat16",
        "max_model_len": 2048,
        "tensor_parallel_size": 2,
        "gpu_memory_utilization": 0.6,
        "enforce_eager": False,
    }
    assert s.kv_cache_gib == 8 and s.python == "/venv/bin/python"
    assert VLLMSettings.of(cfg.model_copy(update={"vllm_max_model_len": 512}), 2048).max_model_len == 512
    default = VLLMSettings.of(RolloutSection(python="/venv/bin/python"), 2048)
    assert default.dtype == "float32" and default.enforce_eager and default != s
    assert len({default, s, VLLMSettings.of(cfg, 2048)}) == 2  # equal settings, one key


def test_rollout_device_overrides_update_device_for_the_transformers_engine(tiny_model: Path) -> None:
    """rollout.device places generation apart from the update: a CPU rollout beside a CUDA update;
    unset, generation follows update.device (here: a refusal naming the setting, on a machine without CUDA)."""
    import pytest

    from rlvr.rollout import engines
    from rlvr.stages.generation import _policy_engine

    cuda_update = {"update": {"device": "cuda"}}
    cfg = Config.model_validate({**cuda_update, "rollout": {"engine": "transformers", "device": "cpu"}})
    _, got, device = _policy_engine(cfg, tiny_model)
    assert device == torch.device("cpu") and got.name == "transformers"
    engines.close_all()
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="update.device"):
            _policy_engine(Config.model_validate({**cuda_update, "rollout": {"engine": "transformers"}}), tiny_model)


def test_merged_lora_scratch_of_a_gone_process_is_removed(tmp_path: Path, monkeypatch) -> None:
    """The vLLM engine's merged-LoRA scratch folder (a model's weights) is removed once its process is
    gone, by the next engine that merges; a live process's folder stays."""
    import subprocess
    import sys
    import tempfile

    from rlvr.rollout import engines

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"{engines.MERGED_PREFIX}{gone.pid}-abc"
    mine = tmp_path / f"{engines.MERGED_PREFIX}{os.getpid()}-def"
    other = tmp_path / "rlvr-vllm-1.log"
    for folder in (dead, mine):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"x")
    other.write_text("a log")
    engines._remove_orphan_merges()
    assert not dead.exists() and mine.is_dir() and other.is_file()
