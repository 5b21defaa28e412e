"""The shipped recipes (recipes/*.toml): each parses and validates, each value it changes from the
defaults says where it came from, and `rlvr train RECIPE` reaches the model check."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr.config import Config, load_config
from tests.helpers import ROOT

RECIPES = sorted((ROOT / "recipes").glob("*.toml"))


def test_recipes_are_shipped() -> None:
    names = {p.stem for p in RECIPES}
    assert {"smollm2-arithmetic", "smollm2-logic", "smollm2-retrieval"} <= names


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_validates_and_explains_each_changed_value(recipe: Path) -> None:
    cfg = load_config(recipe)  # raises ConfigError, naming the field, if the recipe is invalid
    defaults = Config().model_dump(mode="json")
    ours = cfg.model_dump(mode="json")
    lines = recipe.read_text().splitlines()
    section = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").split(".")[0]
        elif "=" in stripped and not stripped.startswith("#"):
            key = stripped.split("=")[0].strip()
            if section in defaults and key in defaults[section] and ours[section][key] != defaults[section][key]:
                assert "#" in line, f"{recipe.name}: [{section}] {key} differs from the default but says nothing about why"
    assert tomllib.loads(recipe.read_text())  # and it is plain TOML


def test_train_with_a_recipe_asks_for_its_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLVR_CACHE", str(tmp_path / "cache"))
    recipe = next(p for p in RECIPES if p.stem == "smollm2-arithmetic")
    res = CliRunner().invoke(app, ["train", str(recipe), "--run", str(tmp_path / "run")])
    assert res.exit_code == 2 and "rlvr models prepare smollm2-135m-instruct" in res.output
    assert not (tmp_path / "run").exists()


OUTSIDE = re.compile(r"\.\./|(?<![\w.])shared/|FIELD-NOTES")  # a path above the repository, or notes that are not in it


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_cites_only_files_in_the_repository(recipe: Path) -> None:
    """A recipe's reader has the repository, not the machine it was tuned on: every file its comments
    cite (docs/..., bench/results/..., another recipe) must exist in the repository."""
    root = recipe.parent.parent
    for n, line in enumerate(recipe.read_text().splitlines(), 1):
        assert not OUTSIDE.search(line), f"{recipe.name}:{n} cites something outside the repository: {line.strip()}"
        for cited in re.findall(r"\b((?:docs|bench|recipes|rlvr|data)/[\w./-]*\w)", line):
            assert (root / cited).exists(), f"{recipe.name}:{n} cites {cited}, which is not in the repository"
