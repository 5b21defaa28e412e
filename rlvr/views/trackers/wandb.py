"""W&B in offline mode: a run written to wandb/offline-run-*-<id> folders, uploaded later by `wandb sync`.
The run id is kept in the rlvr run's tracking state; each sync is one finished session, a new
offline folder of the same run id (W&B writes the file only as a session finishes). Every figure's x axis is `iteration` (wandb.define_metric), and
W&B's own step counts log calls across processes (kept in the state), so it never repeats.

Test: tests/integration/test_tracking.py (the .wandb files parsed back with wandb's own protobuf records).
"""

from __future__ import annotations

import uuid

from rlvr.views.trackers import Target, require


class WandbTracker:
    durable = False  # nothing is on disk before finish(): rlvr.views.track.sync closes it after each sync

    def __init__(self, target: Target, state: dict) -> None:
        wandb = require("wandb", "wandb")
        self._wandb = wandb
        self._run_id = state.get("run_id") or uuid.uuid4().hex[:12]  # W&B run ids: letters and digits
        self._next_step = int(state.get("next_step", 0))
        settings = wandb.Settings(
            silent=True, console="off", x_disable_stats=True, disable_git=True, save_code=False, x_save_requirements=False
        )
        self._run = wandb.init(
            mode="offline",
            dir=target.where,
            project=target.group,
            id=self._run_id,
            name=target.name,
            config=target.config,
            resume="allow",
            reinit="create_new",
            settings=settings,
        )
        self._run.define_metric("iteration")
        self._run.define_metric("*", step_metric="iteration")

    def log(self, step: int, metrics: dict[str, float], responses: list[dict]) -> None:
        row: dict = {**metrics, "iteration": step}
        if responses:
            cols = list(responses[0])
            row["responses"] = self._wandb.Table(columns=cols, data=[[r[c] for c in cols] for r in responses])
        # commit=True: with an explicit step W&B holds the row open until a later step or finish(), so a
        # killed process would lose it (tests/integration/test_tracking.py kills one)
        self._run.log(row, step=self._next_step, commit=True)
        self._next_step += 1

    def flush(self) -> None:
        pass  # the offline run's file is written by wandb's service process; finish() waits for it

    def state(self) -> dict:
        return {"run_id": self._run_id, "next_step": self._next_step}

    def close(self) -> None:
        self._run.finish()
