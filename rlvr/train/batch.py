"""Training rows and micro-batches: what the update trains on, and how it is laid out for a forward pass.

load_rows reads a stage's training rows with DuckDB (sql/update_batch.sql: the groups with reward
variance for grpo, the correct rows for rft); micro_batches cuts a mini-batch into length-sorted
micro-batches within a token budget; collate lays one out as tensors, right-padded or packed
without padding (update.packing).

Tests: tests/integration/test_update_packing.py (budgets, packed == padded), tests/integration/test_update.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import torch

from rlvr.train import sql


@dataclass(frozen=True)
class TrainRow:
    prompt_ids: list[int]
    response_ids: list[int]
    old_logprobs: list[float]  # the sampling engine's logprobs of response_ids
    advantage: float
    truncated: bool = False  # finish_reason == "length"
    trainer_old_logprobs: list[float] | None = None  # TIS: pi_old as the trainer computes it

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)


def load_rows(rollout_files: list[Path], score_files: list[Path], objective: str = "grpo") -> tuple[list[TrainRow], float, dict]:
    """Training rows, the sampling temperature, and group stats (and the rollouts' staleness). grpo: the signal-carrying groups'
    rows; rft: the correct rows (advantage 1). A row whose response_logprobs are missing (an
    imported response without them, `rlvr import`: NULL in the table) has old_logprobs = [] (see
    rlvr.train.loop.fill_missing_logprobs)."""
    con = duckdb.connect()
    p = {"rollouts": [str(f) for f in rollout_files], "scores": [str(f) for f in score_files], "objective": objective}
    rows = con.execute(sql.load("update_batch"), p).fetchall()
    used, dropped, reward_mean, staleness = con.execute(sql.load("update_stats"), p).fetchone()
    temps = {r[5] for r in rows}
    if len(temps) > 1:
        raise ValueError(f"rollout rows of one iteration have several temperatures {sorted(temps)}; expected one")
    out = [TrainRow(list(r[2]), list(r[3]), list(r[4] or []), float(r[6]), r[7] == "length") for r in rows]
    stats = {"groups_used": used or 0, "groups_dropped": dropped or 0, "reward_mean": float(reward_mean or 0.0)}
    stats["staleness"] = staleness or 0
    return out, (temps.pop() if temps else 1.0), stats


def micro_batches(rows: list[TrainRow], token_budget: int, *, packed: bool = False) -> list[list[TrainRow]]:
    """Length-sorted micro-batches within a token budget (a row longer than the budget gets a
    micro-batch of its own). padded: rows x longest <= budget; packed: sum of lengths <= budget."""
    out: list[list[TrainRow]] = []
    for r in sorted(rows, key=lambda r: r.length):
        size = (sum(x.length for x in out[-1]) + r.length if packed else (len(out[-1]) + 1) * r.length) if out else 0
        if out and size <= token_budget:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def rank_micro_batches(
    rows: list[TrainRow], token_budget: int, *, packed: bool = False, ranks: int = 1
) -> list[list[TrainRow] | None]:
    """micro_batches(rows), laid out for `ranks` data-parallel ranks in the order Dist.share deals them
    (rank r takes places r, r + ranks, ...). Each micro-batch goes, costliest first, to the rank with the
    least cost so far (cost: the tokens a forward pass computes, padding included unless packed), so
    that no rank waits at the gradients' sum for another with a whole micro-batch more, as dealing
    them in turn did. A rank with fewer micro-batches than another has None in the places left. The
    micro-batches are those of one process, so N processes compute what one does, summed in another
    order. One rank: micro_batches(rows)."""
    mbs = micro_batches(rows, token_budget, packed=packed)
    if ranks == 1:
        return mbs
    dealt: list[list[list[TrainRow]]] = [[] for _ in range(ranks)]
    load = [0] * ranks
    for mb in sorted(mbs, key=lambda mb: -_cost(mb, packed)):  # (a stable sort: ties keep their order)
        k = load.index(min(load))
        dealt[k].append(mb)
        load[k] += _cost(mb, packed)
    depth = max(len(d) for d in dealt)
    return [d[j] if j < len(d) else None for j in range(depth) for d in dealt]


def _cost(mb: list[TrainRow], packed: bool) -> int:
    return sum(r.length for r in mb) if packed else len(mb) * max(r.length for r in mb)


def collate(rows: list[TrainRow], pad_id: int, device: torch.device, *, packed: bool = False) -> dict[str, torch.Tensor]:
    """One micro-batch: the model's input and the loss tensors.

    Loss tensors are response-aligned in a (B, T-1) layout, T the longest row: position t of row b
    predicts token t+1 of sequence b; `mask` is 1 there for response tokens, `old` holds their
    rollout logprobs, `adv` (B,) the advantages. The model's input is either
    - padded: `ids`, `attn` (B, T), right-padded; or
    - packed: `ids`, `pos` (1, L), L = the sum of the lengths, no padding: the sequences side by
      side, position ids restarting at 0 for each, and `src` (1, L-1) marking the positions that
      predict a response token (in the same order as `mask`). With attention_mask=None,
      transformers reads the sequence boundaries from the position ids and keeps attention inside
      each sequence (masking_utils.find_packed_sequence_indices): the padding-free packing of
      TRL's `padding_free` / DataCollatorWithFlattening.
    """
    T = max(r.length for r in rows)
    B = len(rows)
    mask = torch.zeros((B, T - 1))  # (B, T-1): 1 where position t predicts a response token
    old = torch.zeros((B, T - 1))  # (B, T-1)
    for b, r in enumerate(rows):
        P, R = len(r.prompt_ids), len(r.response_ids)
        mask[b, P - 1 : P + R - 1] = 1
        old[b, P - 1 : P + R - 1] = torch.tensor(r.old_logprobs)
    out = {"mask": mask, "old": old, "adv": torch.tensor([r.advantage for r in rows])}  # adv: (B,)
    if rows[0].trainer_old_logprobs is not None:
        trainer_old = torch.zeros((B, T - 1))  # (B, T-1)
        for b, r in enumerate(rows):
            P, R = len(r.prompt_ids), len(r.response_ids)
            trainer_old[b, P - 1 : P + R - 1] = torch.tensor(r.trainer_old_logprobs)
        out["trainer_old"] = trainer_old
    if packed:
        out["ids"] = torch.tensor([t for r in rows for t in r.prompt_ids + r.response_ids])[None]  # (1, L)
        out["pos"] = torch.cat([torch.arange(r.length) for r in rows])[None]  # (1, L)
        src = torch.zeros((1, out["ids"].shape[1] - 1), dtype=torch.bool)  # (1, L-1)
        start = 0
        for r in rows:
            src[0, start + len(r.prompt_ids) - 1 : start + r.length - 1] = True
            start += r.length
        out["src"] = src
    else:
        out["ids"] = torch.full((B, T), pad_id, dtype=torch.long)  # (B, T)
        out["attn"] = torch.zeros((B, T), dtype=torch.long)  # (B, T)
        for b, r in enumerate(rows):
            out["ids"][b, : r.length] = torch.tensor(r.prompt_ids + r.response_ids)
            out["attn"][b, : r.length] = 1
    return {k: v.to(device) for k, v in out.items()}
