"""The warm trainer: what an update leaves in memory for the next one (update.warm, nproc = 1).

A cold update loads v_i's weights, restores AdamW from its trainer_state.pt, trains, and writes
v_{i+1}; the next update loads v_{i+1} again. Warm, the process keeps the policy, the optimiser,
the schedule and the global step it ended with, as the rollout engine pool keeps a live vLLM
engine (rlvr.rollout.engines). Every checkpoint is still written and committed; only the reload is
skipped, and the held state is used only when it is exactly the committed version asked for:

- after an update writes v_{i+1}, `keep(state, out)` holds it as unconfirmed (`out`: the folder it
  was written to);
- once the stage has committed that folder, `confirm(out, digest)` names it by its commit record's
  digest (the sha256 of every file written, weights and trainer state included);
- the next update asks `take(policy_id, setup)` with the digest of the record that committed the
  version it trains and the setup (config hash, reference, device) it trains with: the held state
  comes back only when both match, else it is dropped and the update loads from the files. An
  update that fails (any exception, a stop) drops it too, so a retry, a resume or another run
  always starts from what is committed.

A warm update therefore computes on the same numbers as a cold one: the weights it holds are the
ones it saved (fp32 safetensors round-trip exactly), and AdamW's state is the one it pickled.
tests/e2e/test_async.py trains the same run warm and cold and compares the bytes.

Test: pytest tests/e2e/test_async.py -k warm
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

_LOCK = threading.Lock()


@dataclass
class TrainerState:
    """What an update trains with and what it ends with (rlvr.train.update)."""

    model: Any  # the PreTrainedModel
    tok: Any
    net: Any  # what the loop runs: the model, or its FSDP2 root (never held: nproc = 1 only)
    ref: Any  # the KL reference (v0), or None
    opt: Any
    sched: Any
    global_step: int


@dataclass
class _Held:
    state: TrainerState
    setup: str
    written_to: str  # the folder the state was saved to
    policy_id: str | None = None  # its commit record's digest, once the stage confirmed the commit


_held: _Held | None = None


def take(policy_id: str, setup: str) -> TrainerState | None:
    """The held state if it is the committed version `policy_id` with this `setup`, else None (and
    whatever was held is dropped: it is of no use to this update, and memory is freed first)."""
    global _held
    with _LOCK:
        held, _held = _held, None
    if held is not None and policy_id and held.policy_id == policy_id and held.setup == setup:
        return held.state
    return None


def keep(state: TrainerState, written_to: str, setup: str) -> None:
    """Hold what an update ended with, saved to `written_to`; unusable until confirm() names its commit."""
    global _held
    state.opt.zero_grad(set_to_none=True)  # the next update zeroes them first anyway; frees a weights-sized buffer
    with _LOCK:
        _held = _Held(state, setup, written_to)


def confirm(written_to: str, policy_id: str) -> bool:
    """The folder `written_to` was committed with record digest `policy_id`: the held state (if it is
    the one saved there) may now serve the update that trains that version. Returns whether it was."""
    with _LOCK:
        if _held is None or _held.written_to != written_to:
            return False
        _held.policy_id = policy_id
        return True


def drop() -> None:
    """Forget the held state (a failed update: what it holds may be half a step)."""
    global _held
    with _LOCK:
        _held = None


def holding() -> str | None:
    """The digest of the committed version held, or None (tests, logs)."""
    with _LOCK:
        return None if _held is None else _held.policy_id
