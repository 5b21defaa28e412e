"""Logprobs of the response tokens under a policy, through the LM head in chunks.

The transformer runs once per micro-batch; the LM head runs only on the positions that predict a
response token, in chunks recomputed in backward, so (tokens, vocab) logits never exist for a
whole micro-batch (ResponseLogprobs). response_logprobs puts them in the loss layout of
rlvr.train.batch.collate; rows_logprobs is the one no-grad pass over rows (imported responses'
missing logprobs, TIS's trainer-side pi_old); policy_token_logprobs is the full-logits oracle the
tests and bench/update.py compare against.

Tests: tests/integration/test_update.py (chunked == full logits: values, entropies, gradients),
tests/integration/test_update_packing.py (packed == padded), tests/integration/test_update_memory.py (bf16).
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint
from transformers import PreTrainedModel

from rlvr.train import grpo
from rlvr.train.batch import TrainRow, collate


def _autocast(device: torch.device, bf16: bool) -> torch.autocast:
    """bf16 autocast where asked, on CUDA or CPU (torch.autocast supports both)."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)


def _model_inputs(batch: dict[str, torch.Tensor]) -> dict:
    """HF forward arguments for a padded or a packed batch; no KV cache (it would also turn off
    transformers' packed-sequence detection, which runs only without a cache)."""
    return {"input_ids": batch["ids"], "attention_mask": batch.get("attn"), "position_ids": batch.get("pos"), "use_cache": False}


def _forward(model: PreTrainedModel, batch: dict[str, torch.Tensor], bf16: bool) -> torch.Tensor:
    with _autocast(batch["ids"].device, bf16):
        return model(**_model_inputs(batch)).logits  # (B, T, V)


HEAD_CHUNK_TOKENS = 1024  # response tokens per LM-head chunk: bounds the (chunk, V) logits held at once


def _plain_linear_head(model: PreTrainedModel) -> torch.nn.Module | None:
    """The LM head when logits are just `hidden @ W.T (+ b)` (Llama, Qwen, Mistral, SmolLM...),
    else None (soft-capped or scaled heads take the full-logits path)."""
    head = model.get_output_embeddings()
    conf = model.config
    if not isinstance(head, torch.nn.Linear) or getattr(conf, "final_logit_softcapping", None):
        return None
    if getattr(conf, "logit_scale", None) not in (None, 1.0) or not hasattr(model, model.base_model_prefix):
        return None
    return head


def _chunk_logprobs(
    h: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, H) hidden states -> logprob of each target (n,) and entropy (n,), via (n, V) logits."""
    logits = torch.nn.functional.linear(h, weight, bias).float() / (temperature if temperature > 0 else 1.0)  # (n, V)
    logz = torch.logsumexp(logits, dim=-1)  # (n,)
    lp = logits.gather(-1, targets[:, None]).squeeze(-1) - logz  # (n,)
    with torch.no_grad():
        probs = torch.softmax(logits, dim=-1)  # (n, V)
        entropy = logz - (probs * logits).sum(-1)  # (n,)  H = log Z - E_p[logit]
    return lp, entropy


class ResponseLogprobs(torch.nn.Module):
    """A policy as `batch -> (logprobs (N,), entropies (N,))` of the batch's N response tokens.

    The transformer runs once; the LM head runs only on response positions, in chunks that are
    recomputed in backward (torch.utils.checkpoint), so the (tokens, vocab) logits never exist for
    the whole micro-batch: with a 49k vocabulary they, not the layers, dominated peak memory
    (bench/update.py). TRL's `logits_to_keep` and chunked log-prob head follow the same idea.
    A module, not a function, because under FSDP2 it is the root that fully_shard wraps: FSDP2
    gathers and reduces the root's parameters (embeddings, final norm, LM head) only around a
    module's forward, and the head chunks bypass the HF model's own forward."""

    def __init__(self, policy: PreTrainedModel):
        super().__init__()
        self.policy = policy

    def forward(self, batch: dict[str, torch.Tensor], temperature: float, bf16: bool = False) -> tuple[torch.Tensor, ...]:
        src = batch["src"] if "src" in batch else batch["mask"].bool()  # (b, t-1): inputs that predict a response token
        targets = batch["ids"][:, 1:][src]  # (N,)
        head = _plain_linear_head(self.policy)
        if head is None:  # generic path: full logits
            logits = _forward(self.policy, batch, bf16)[:, :-1][src]  # (N, V)
            with torch.no_grad():
                ent = grpo.token_entropy(logits, temperature)  # (N,)
            return grpo.token_logprobs(logits, targets, temperature), ent
        with _autocast(batch["ids"].device, bf16):
            base = getattr(self.policy, self.policy.base_model_prefix)
            h = base(**_model_inputs(batch)).last_hidden_state[:, :-1][src]  # (N, H)
        lps, ents = [], []
        for s in range(0, h.shape[0], HEAD_CHUNK_TOKENS):
            lp, ent = torch.utils.checkpoint.checkpoint(
                _chunk_logprobs,
                h[s : s + HEAD_CHUNK_TOKENS],
                targets[s : s + HEAD_CHUNK_TOKENS],
                head.weight,
                head.bias,
                temperature,
                use_reentrant=False,
            )
            lps.append(lp)
            ents.append(ent.detach())
        return torch.cat(lps), torch.cat(ents)  # (N,), (N,)


def response_logprobs(
    model: PreTrainedModel | ResponseLogprobs, batch: dict[str, torch.Tensor], temperature: float, bf16: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logprobs (B, T-1) of the batch's response tokens in the loss layout (0 elsewhere) and their
    entropies (B, T-1); padded or packed batch (collate). `model`: a policy, or a policy wrapped
    in ResponseLogprobs (FSDP2)."""
    net = model if isinstance(model, ResponseLogprobs) else ResponseLogprobs(model)
    lp, ent = net(batch, temperature, bf16)  # (N,), (N,): in `mask` order (row-major, as `src`)
    mask = batch["mask"].bool()  # (B, T-1)
    zeros = torch.zeros(mask.shape, dtype=torch.float32, device=lp.device)  # (B, T-1)
    return zeros.masked_scatter(mask, lp), zeros.masked_scatter(mask, ent)


def policy_token_logprobs(model: PreTrainedModel, batch: dict[str, torch.Tensor], temperature: float = 1.0) -> torch.Tensor:
    """Logprobs of a collated batch's tokens under `model`: (B, T-1)."""
    return grpo.token_logprobs(_forward(model, batch, False)[:, :-1], batch["ids"][:, 1:], temperature)  # full logits: the oracle


def rows_logprobs(
    model: PreTrainedModel | ResponseLogprobs,
    batches: list[list[TrainRow]],
    *,
    temperature: float,
    pad_id: int,
    device: torch.device,
    bf16: bool,
    packed: bool = False,
) -> list[list[float]]:
    """The current policy's logprobs of each row's response tokens, in one no-grad pass in eval
    mode, one forward per batch (collate's layout, padded or packed): one list per row, in the
    order of the batches' rows. Every rank that calls it runs the same passes, as FSDP2's
    collectives need."""
    model.eval()
    out = []
    with torch.no_grad():
        for rows in batches:
            lp, _ = response_logprobs(model, collate(rows, pad_id, device, packed=packed), temperature, bf16)  # (b, T-1)
            lps = lp.tolist()  # one transfer per batch, not one per row
            out += [lps[b][len(r.prompt_ids) - 1 : r.length - 1] for b, r in enumerate(rows)]
    return out
