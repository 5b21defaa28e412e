"""Reading a config: a TOML file or data, --set overrides, and errors that name the field and the fix.

    load_config(path) -> Config      parse_config(data, source) -> Config
    apply_overrides(data, ["rollout.group_size=4"])      diff_configs(old, new)

A ValidationError becomes a ConfigError whose lines are 'section.field: what is wrong' (an
unknown field gets the closest known name). Test: pytest tests/unit/config/test_config.py
"""

from __future__ import annotations

import difflib
import json
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rlvr.config.tree import MUTABLE_SECTIONS, Config, inner_model
from rlvr.errors import RlvrError


class ConfigError(RlvrError, ValueError):
    """A config that cannot be used; the message names the field and the fix."""


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The fields known where an error's location points, e.g. ('task', 'datasets', 0, 'pth') ->
    DatasetSection's: list indices and dict keys (0, 'logic') step into the entry's model."""
    inside = False  # the previous part named a list or dict of sections: this part is an index or key
    for part in loc[:-1]:
        if inside:
            inside = False
            continue
        field = model.model_fields.get(str(part))
        inner = inner_model(field.annotation) if field is not None else None
        if inner is None:
            return []
        inside, model = inner is not field.annotation, inner
    return list(model.model_fields)


def format_errors(err: ValidationError, source: str) -> str:
    lines = [f"invalid config in {source}:"]
    for e in err.errors():
        loc = tuple(e["loc"])
        where = ".".join(str(p) for p in loc) or "(top level)"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            known = _known_fields(Config, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else f"known fields here: {', '.join(known)}; " if known else ""
            msg = f"unknown field; {hint}(remove it or fix the spelling)"
        elif e["type"] not in ("value_error", "assertion_error"):
            msg = f"{msg} (got {e.get('input')!r})"
        lines.append(f"  {where}: {msg}")
    return "\n".join(lines)


def parse_config(data: dict[str, Any], source: str = "<config>") -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_errors(err, source)) from None


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`section.field=value` pairs (the CLI's --set) applied to config data. A value is read as a
    TOML value (`0.5`, `true`, `"x"`, `[1, 2]`), else taken as a plain string (`task.name=logic`)."""
    data = json.loads(json.dumps(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) < 2 or not all(parts):
            raise ConfigError(f"--set {item!r}: expected SECTION.FIELD=VALUE, e.g. --set task.name=logic")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        node = data
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {part} is a value, not a section")
        node[parts[-1]] = value
    return data


def load_config(path: str | Path | None) -> Config:
    """Load a TOML config; None gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist; run `rlvr config > {p.name}` to write one with the defaults")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{p} is not valid TOML: {err}") from None
    return parse_config(data, str(p))


def diff_configs(old: Config, new: Config) -> list[str]:
    """Fields whose values differ, as 'section.field: old -> new' (run.iterations and MUTABLE_SECTIONS,
    which a run may change, ignored)."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out = []
    for section in (s for s in a if s not in MUTABLE_SECTIONS):
        for key in a[section]:
            if (section, key) != ("run", "iterations") and a[section][key] != b[section][key]:
                out.append(f"{section}.{key}: {a[section][key]!r} -> {b[section][key]!r}")
    return out
