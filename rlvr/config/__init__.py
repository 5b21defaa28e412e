"""The one config tree: pydantic models loaded from one TOML file.

Every field is documented once, beside it. Defaults run out of the box on 2 CPU cores:
`rlvr train --run runs/demo` uses the embedded tiny model and the shipped arithmetic task.
`rlvr config` prints this tree as TOML with its defaults.

    sections.py  [run] [model] [rollout] [update] [prompt] [eval] [checkpoint] [tracking] [placement], and the base section
    task.py      [task]: shipped tasks, [[task.datasets]], split sizes; VERIFIERS, TASK_NAMES
    verify.py    [verify]: reward weights, extraction, advantages, tier limits, [[verify.rewards]]
    tree.py      Config (one of each section), hash_data (a run's identity), MUTABLE_SECTIONS
    load.py      load_config, parse_config, apply_overrides (--set), diff_configs, ConfigError
    docs.py      commented_toml: what `rlvr config` prints

`from rlvr.config import X` is the public API (the stages, rlvr.verify and reward plug-ins use
it); the modules above are how it is kept. Errors name the field (`rollout.group_size`) and say
how to fix it; see `format_errors`. Test: pytest tests/unit/config/test_config.py
"""

from rlvr.config.docs import commented_toml
from rlvr.config.load import ConfigError, apply_overrides, diff_configs, format_errors, load_config, parse_config
from rlvr.config.sections import (
    CheckpointSection,
    EvalSection,
    LoraSection,
    ModelSection,
    PlacementSection,
    PromptSection,
    RolloutSection,
    RunSection,
    TrackingSection,
    Turn,
    UpdateSection,
)
from rlvr.config.task import TASK_NAMES, VERIFIERS, ColumnMap, DatasetSection, TaskName, TaskSection
from rlvr.config.tree import MUTABLE_SECTIONS, Config, hash_data
from rlvr.config.verify import DEFAULT_EXTRACTION, DEFAULT_WEIGHTS, PLUGIN_NAME, RewardPlugin, RewardWeights, VerifySection

__all__ = [
    "DEFAULT_EXTRACTION",
    "DEFAULT_WEIGHTS",
    "MUTABLE_SECTIONS",
    "PLUGIN_NAME",
    "TASK_NAMES",
    "VERIFIERS",
    "CheckpointSection",
    "ColumnMap",
    "Config",
    "ConfigError",
    "DatasetSection",
    "EvalSection",
    "ModelSection",
    "PlacementSection",
    "PromptSection",
    "RewardPlugin",
    "RewardWeights",
    "RolloutSection",
    "RunSection",
    "TaskName",
    "TaskSection",
    "TrackingSection",
    "Turn",
    "LoraSection",
    "UpdateSection",
    "VerifySection",
    "apply_overrides",
    "commented_toml",
    "diff_configs",
    "format_errors",
    "hash_data",
    "load_config",
    "parse_config",
]
