"""The experiment trackers rlvr/views/track.py sends a run's figures to, one small module per backend.

    tensorboard.py  event files written with tensorboard's own writer (no torch, no TensorFlow)
    mlflow.py       a run on an MLflow tracking server, through mlflow-skinny's MlflowClient
    wandb.py        a W&B run in offline mode (wandb/offline-run-* folders; `wandb sync` uploads them)

Each takes a `Target` (where to send, the run's name and config) and the state a previous process
left (`Tracker.state()`: the tracker's run id and anything it needs to continue that run), and
exposes log / flush / state / close. None of their packages is needed to train: each is an extra,
and `require` turns a missing one into an error naming it. Test: tests/integration/test_tracking.py.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

from rlvr.errors import RlvrError

EXTRAS = {"tensorboard": "tensorboard", "mlflow": "mlflow", "wandb": "wandb"}  # backend -> the pip extra


class TrackingError(RlvrError, RuntimeError):
    """The tracker cannot be used as configured; the message says what to install or set."""


@dataclass(frozen=True)
class Target:
    backend: str
    where: str  # tensorboard: the log dir; mlflow: the tracking URI; wandb: the folder offline runs go into
    group: str  # mlflow: the experiment; wandb: the project; tensorboard: unused
    name: str  # the tracker run's name
    config: dict  # the run's config data (logged once, when the tracker run is created)
    location: str  # the rlvr run, as its commands name it

    @property
    def label(self) -> str:
        """The destination as messages name it, and as the state file is keyed."""
        return f"{self.backend} {self.where}" + (f" ({self.group})" if self.backend != "tensorboard" else "")


class Tracker(Protocol):
    durable: bool  # is a flushed part on disk (or on the server)? False: only once close() returned

    def log(self, step: int, metrics: dict[str, float], responses: list[dict]) -> None: ...

    def flush(self) -> None: ...

    def state(self) -> dict: ...

    def close(self) -> None: ...


MODULES = {"tensorboard": ("tensorboard",), "mlflow": ("mlflow", "pandas"), "wandb": ("wandb",)}  # what each extra brings


def _missing(backend: str, module: str, why: str) -> TrackingError:
    return TrackingError(
        f"tracking.backend = {backend!r} needs the {module} package ({why}): pip install 'rlvr[{EXTRAS[backend]}]', "
        "or set tracking.backend = 'none'"
    )


def check_installed(backend: str) -> None:
    """Are the backend's packages installed? Answered without importing them (a run checks it before it starts)."""
    for module in MODULES[backend]:
        if importlib.util.find_spec(module) is None:
            raise _missing(backend, module, "not installed")


def require(backend: str, module: str) -> ModuleType:
    """Import a backend's package, or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise _missing(backend, module, str(err)) from None


def open_tracker(target: Target, state: dict) -> Tracker:
    """The tracker of target.backend, continuing the tracker run that `state` names (a new one when empty)."""
    if target.backend == "tensorboard":
        from rlvr.views.trackers.tensorboard import TensorBoardTracker

        return TensorBoardTracker(target, state)
    if target.backend == "mlflow":
        from rlvr.views.trackers.mlflow import MlflowTracker

        return MlflowTracker(target, state)
    if target.backend == "wandb":
        from rlvr.views.trackers.wandb import WandbTracker

        return WandbTracker(target, state)
    raise TrackingError(f"tracking.backend = {target.backend!r}: use none, tensorboard, mlflow or wandb")


def flat_params(data: dict, prefix: str = "") -> dict[str, str]:
    """A nested config as flat 'section.field' -> value strings (what MLflow params and TB text show)."""
    out: dict[str, str] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= flat_params(value, f"{name}.")
        else:
            out[name] = str(value)
    return out
