"""The config tree: `Config` holds one of each section; its hash identifies a run.

Test: pytest tests/unit/config/test_config.py
"""

from __future__ import annotations

import json
from typing import Any, get_args

import tomli_w
from pydantic import BaseModel, model_validator

from rlvr.config import plan
from rlvr.config.sections import (
    CheckpointSection,
    EvalSection,
    ModelSection,
    PlacementSection,
    PromptSection,
    RolloutSection,
    RunSection,
    TrackingSection,
    UpdateSection,
    _Section,
)
from rlvr.config.task import TaskSection
from rlvr.config.verify import VerifySection
from rlvr.files import json_digest


class Config(_Section):
    run: RunSection = RunSection()
    model: ModelSection = ModelSection()
    task: TaskSection = TaskSection()
    prompt: PromptSection = PromptSection()
    rollout: RolloutSection = RolloutSection()
    verify: VerifySection = VerifySection()
    update: UpdateSection = UpdateSection()
    eval: EvalSection = EvalSection()
    checkpoint: CheckpointSection = CheckpointSection()
    tracking: TrackingSection = TrackingSection()
    placement: PlacementSection = PlacementSection()

    @model_validator(mode="after")
    def _nodes_placed(self) -> Config:
        # the nodes of an update are workers of a pool: the driver alone is one machine
        if self.update.nnodes > 1 and self.placement.update is None:
            raise ValueError(
                f"update.nnodes = {self.update.nnodes} runs the update on {self.update.nnodes} workers of a pool: set "
                "placement.update = POOL and start that many `rlvr worker --pool POOL --stages update`, or set update.nnodes = 1"
            )
        return self

    def eval_points(self) -> list[int]:
        """Policy versions that get evaluated: multiples of eval.every up to run.iterations, and the last."""
        if self.eval.every == 0:
            return []
        n = self.run.iterations
        return sorted({i for i in range(0, n + 1, self.eval.every)} | {n})

    def stage_plan(self) -> list[tuple[str, int | None]]:
        """(stage, iteration) in one order the training flow may run them (rlvr.config.plan.stage_plan):
        with rollout.max_staleness = 0, prepare, then per iteration i evaluate(i) when i is an eval
        point, rollout(i), verify(i), update(i); evaluate(n) last."""
        return plan.stage_plan(self.run.iterations, self.eval_points(), self.rollout.max_staleness)

    def stage_deps(self) -> dict[tuple[str, int | None], list[tuple[str, int | None]]]:
        """What each stage of stage_plan waits for (rlvr.config.plan.stage_deps): the async flow's order."""
        return plan.stage_deps(self.stage_plan(), self.rollout.max_staleness)

    def hash(self) -> str:
        """Identity of a run's config: hash_data of what run.toml stores (unset fields left out)."""
        return hash_data(self.model_dump(mode="json", exclude_none=True))

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))  # unset = TOML key left out


def hash_data(data: dict[str, Any]) -> str:
    """Hash of config data as a TOML file holds it; run.iterations is left out so a run can be
    extended, and [checkpoint], [tracking] and [placement] because retention, trackers and where a stage
    runs change no output (they may change on a live run).
    A run is identified by its own file's data: a field added to rlvr later (with its
    default) changes neither the hash nor the stage fingerprints of runs written before it."""
    data = json.loads(json.dumps(data))
    data.get("run", {}).pop("iterations", None)
    for section in MUTABLE_SECTIONS:
        data.pop(section, None)
    return json_digest(data)


MUTABLE_SECTIONS = ("checkpoint", "tracking", "placement")  # sections an existing run may change: they change no output


def inner_model(annotation: Any) -> type[BaseModel] | None:
    """The section a field holds: the model itself, or the model inside `list[X]`, `dict[str, X]`
    or `X | None` (a [[task.datasets]] entry, a [verify.weights.TASK] table)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(inner_model, get_args(annotation)) if m is not None), None)
