"""`rlvr config`: the default config as TOML, every field's description above it.

Test: pytest tests/unit/config/test_config.py
"""

from __future__ import annotations

import json
from typing import get_origin

import tomli_w
from pydantic import BaseModel

from rlvr.config.tree import Config, inner_model


def _entry_docs(model: type[BaseModel], table: str) -> list[str]:
    """The fields of one entry of a list of tables ([[task.datasets]], [[verify.rewards]]) as
    comments: each field's description and default; a nested section as its own [table.field]."""
    lines = [f"# [[{table}]]   one table per entry (instead of the empty list above), with these fields:"]
    nested = []
    for name, f in model.model_fields.items():
        default = None if f.is_required() else f.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            nested.append((name, type(default)))
            continue
        lines.append(f"#   # {f.description}")
        if f.is_required():
            lines.append(f"#   {name} = ...   (required)")
        else:
            lines.append(f"#   {name} =   (unset)" if default is None else f"#   {tomli_w.dumps({name: default}).strip()}")
    for name, sub in nested:
        lines.append(f"#   [{table}.{name}]   {model.model_fields[name].description}")
        for key, f in sub.model_fields.items():
            default = f.get_default(call_default_factory=True)
            lines += [
                f"#     # {f.description}",
                f"#     {key} =   (unset)" if default is None else f"#     {tomli_w.dumps({key: default}).strip()}",
            ]
    return lines


def _optional_table_docs(model: type[BaseModel], table: str) -> list[str]:
    """An optional section that is absent by default ([update.lora]) as comments: its table header
    and each field's description and default, for a user to uncomment."""
    lines = [f"# [{table}]   uncomment to turn it on; its fields:"]
    for key, f in model.model_fields.items():
        default = f.get_default(call_default_factory=True)
        value = f"{key} = {json.dumps(default)}" if isinstance(default, list) else tomli_w.dumps({key: default}).strip()
        lines += [f"#   # {f.description}", f"#   {value}"]  # a list on one line: JSON strings and numbers are TOML
    return lines


def commented_toml() -> str:
    """The default config as TOML with every field's description above it (`rlvr config`): what a
    user saves, edits and passes to `rlvr train`. Unset fields appear commented out."""
    cfg = Config()
    lines = ["# rlvr config: every field with its default. `rlvr train THIS.toml --run DIR`"]
    for section in Config.model_fields:
        sub = getattr(cfg, section)
        values = sub.model_dump(mode="json")
        lines += ["", f"[{section}]"]
        tables_after: list[tuple[type[BaseModel], str]] = []
        tables = []  # dict-valued fields (verify.weights) go after the section's keys, as [section.field.key]
        for name, f in type(sub).model_fields.items():
            if isinstance(values[name], dict) and all(isinstance(v, dict) for v in values[name].values()):
                tables.append((name, f.description, values[name]))
                continue
            if isinstance(values[name], dict):  # a flat map (verify.extraction): an inline table
                pairs = ", ".join(tomli_w.dumps({k: v}).strip() for k, v in values[name].items())
                lines += [f"# {f.description}", f"{name} = {{ {pairs} }}"]
                continue
            lines.append(f"# {f.description}")
            if values[name] is None and get_origin(f.annotation) is not list and (opt := inner_model(f.annotation)):
                tables_after.append((opt, f"{section}.{name}"))  # a TOML table: after the section's own keys
                continue
            lines.append(f"# {name} =   (unset)" if values[name] is None else tomli_w.dumps({name: values[name]}).strip())
            if get_origin(f.annotation) is list and (entry := inner_model(f.annotation)) is not None:
                lines += _entry_docs(entry, f"{section}.{name}")
        for name, description, table in tables:
            lines.append(f"# {description}")
            for key, value in table.items():
                lines += [f"[{section}.{name}.{key}]", tomli_w.dumps(value).strip()]
        for opt, table in tables_after:
            lines += _optional_table_docs(opt, table)
    return "\n".join(lines) + "\n"
