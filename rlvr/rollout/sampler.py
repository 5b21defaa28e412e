"""The transformers sampler and the seeds of rollout: derive_seed, and G
sampled responses per prompt with the sampling policy's per-token logprobs (the rollout stage
itself is rlvr.stages.generation.rollout; engines.py chooses between this sampler and vLLM).

The transformers engine is a plain KV-cache decode loop rather than `model.generate`, because
RL needs three things `generate` does not give cleanly: one RNG per sample (so a response
depends only on (seed, iteration, prompt_id, sample_idx), not on how rows were batched), the
exact logprob of each sampled token under the temperature-scaled distribution the trainer will
recompute, and a finish reason. Engines receive token ids: prompts are rendered by
rlvr.problems.prompts.prompt_ids, the one function that applies the chat template.

Logprob convention: log_softmax(logits / temperature) at the sampled token (top-p not applied),
the same quantity rlvr.train.grpo.token_logprobs computes in the update. Greedy (temperature 0) records
log_softmax(logits).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class Sampling:
    max_new_tokens: int
    temperature: float
    top_p: float


@dataclass
class Sample:
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" | "length"


def _top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of tokens whose mass reaches top_p (Holtzman et al. 2019)."""
    if top_p >= 1.0:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)  # (B, V)
    cum = sorted_logits.softmax(-1).cumsum(-1)  # (B, V)
    drop = cum - sorted_logits.softmax(-1) >= top_p  # mass before this token already enough
    sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, sorted_logits)


def _cache_kwarg(model: torch.nn.Module) -> str:
    """transformers 5.2x renamed `past_key_values` to `cache`; accept both."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _last_logits_only(model: torch.nn.Module) -> dict:
    """Prefill needs only the last position's logits; with a 49k vocabulary the rest cost more
    than the whole transformer (`logits_to_keep`, transformers >= 4.50)."""
    return {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.forward).parameters else {}


def _cache_of(out: object) -> object:
    return out["cache"] if "cache" in out else out["past_key_values"]  # type: ignore[index,operator]


@torch.no_grad()
def sample_batch(
    model: torch.nn.Module,
    prompts: list[list[int]],
    seeds: list[int],
    *,
    sampling: Sampling,
    eos_ids: set[int],
    pad_id: int,
) -> list[Sample]:
    """Decode one batch with a KV cache; row b uses its own generator seeded with seeds[b]."""
    B, L = len(prompts), max(map(len, prompts))
    device = next(model.parameters()).device
    ids = torch.full((B, L), pad_id, dtype=torch.long)  # (B, L) left padded
    attn = torch.zeros((B, L), dtype=torch.long)  # (B, L)
    for b, p in enumerate(prompts):
        ids[b, L - len(p) :] = torch.tensor(p)
        attn[b, L - len(p) :] = 1
    ids, attn = ids.to(device), attn.to(device)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # (B, L)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    out = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, **_last_logits_only(model))
    cache_kw = _cache_kwarg(model)
    logits, past = out.logits[:, -1].float(), _cache_of(out)  # (B, V)
    samples = [Sample([], [], "length") for _ in range(B)]
    done = [False] * B
    for _ in range(sampling.max_new_tokens):
        if sampling.temperature > 0:
            logp = torch.log_softmax(logits / sampling.temperature, dim=-1)  # (B, V)
            probs = _top_p_filter(logp, sampling.top_p).softmax(-1).cpu()  # (B, V)
            # exponential race (Gumbel-max): argmax p_i / E_i with E_i ~ Exp(1) is a categorical
            # draw from p; one RNG stream per row, and ~50x cheaper than torch.multinomial at V = 49k
            race = torch.stack([torch.empty(probs.shape[1]).exponential_(generator=gens[b]) for b in range(B)])  # (B, V)
            nxt = (probs / race).argmax(-1)  # (B,)
        else:
            logp = torch.log_softmax(logits, dim=-1)  # (B, V)
            nxt = logp.argmax(-1).cpu()  # (B,)
        lp = logp.gather(-1, nxt.to(device)[:, None])[:, 0].cpu()  # (B,)
        for b in range(B):
            if done[b]:
                continue
            t = int(nxt[b])
            samples[b].token_ids.append(t)
            samples[b].logprobs.append(float(lp[b]))
            if t in eos_ids:
                done[b], samples[b].finish_reason = True, "stop"
        if all(done):
            break
        nxt = torch.where(torch.tensor(done), torch.full_like(nxt, pad_id), nxt).to(device)  # (B,)
        attn = torch.cat([attn, torch.ones((B, 1), dtype=attn.dtype, device=device)], dim=1)  # (B, L+t)
        pos = pos[:, -1:] + 1  # (B, 1)
        out = model(input_ids=nxt[:, None], attention_mask=attn, position_ids=pos, use_cache=True, **{cache_kw: past})
        logits, past = out.logits[:, -1].float(), _cache_of(out)
    return samples


@dataclass(frozen=True)
class Request:
    prompt_id: str
    sample_idx: int
    prompt_token_ids: list[int]
    seed: int


def generate_transformers(
    model: torch.nn.Module,
    tok: PreTrainedTokenizerBase,
    requests: list[Request],
    *,
    sampling: Sampling,
    batch_size: int,
) -> Iterator[list[tuple[Request, Sample]]]:
    """Yield (request, sample) pairs batch by batch; rows are length-sorted to cut padding."""
    eos = {tok.eos_token_id} if tok.eos_token_id is not None else set()
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    order = sorted(requests, key=lambda r: len(r.prompt_token_ids))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        out = sample_batch(
            model, [r.prompt_token_ids for r in chunk], [r.seed for r in chunk], sampling=sampling, eos_ids=eos, pad_id=pad
        )
        yield list(zip(chunk, out, strict=True))
