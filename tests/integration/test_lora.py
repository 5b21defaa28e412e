"""LoRA via PEFT ([update.lora]) on the tiny model: config, training, checkpoints, resume, engines, export.

A LoRA run trains only the adapter (v0 untouched, checked by sha256 through base_model.json), its
checkpoints hold megabytes of adapter, not the model; a SIGKILL mid-update and a resume give the
bytes an uninterrupted run gives; the transformers engine, `rlvr eval` and `rlvr export --merge`
all see base + adapter. vLLM serving the adapter is tested in tests/integration/test_vllm.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.models.load import load_policy
from rlvr.models.lora import AdapterBaseError, base_of, is_adapter
from rlvr.problems.prompts import chat_ids
from rlvr.schema import ADAPTER_CONFIG, ADAPTER_WEIGHTS, BASE_REF
from rlvr.store.commit import FAULT_ENV
from rlvr.views.sql import run_sql
from tests.helpers import ROOT

runner = CliRunner()
LORA = {"r": 4, "alpha": 8.0, "target_modules": ["q_proj", "v_proj", "up_proj"]}


def _lora_cfg(small_config: Config, folder: Path, **update) -> Config:
    """small_config + [update.lora] + a parity reward (every group has reward variance, whatever the
    tiny model samples: each iteration takes its steps), every version kept."""
    parity = folder / "parity.sql"
    parity.write_text("SELECT prompt_id, sample_idx, (sample_idx % 2)::DOUBLE AS score, 'odd sample' AS reason FROM responses")
    data = small_config.model_dump()
    data["update"].update({"lora": LORA, "lr": 1e-2, **update})
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]
    data["checkpoint"]["keep_last"] = 0
    return Config.model_validate(data)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _logits(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0]  # (T, V)


def _peft_logits(folder: Path, ids: list[int]) -> torch.Tensor:
    """base + adapter, unmerged, as PEFT itself computes them (the reference the merged paths must equal)."""
    from peft import PeftModel

    base, _ = load_policy(base_of(folder), torch.device("cpu"))
    return _logits(PeftModel.from_pretrained(base, str(folder)).eval(), ids)


def test_lora_config_names_its_fields() -> None:
    assert Config.model_validate({"update": {"lora": {}}}).update.lora_on
    assert not Config.model_validate({"update": {"lora": {"enabled": False}}}).update.lora_on
    assert (
        Config().hash() == Config.model_validate({}).hash() and Config().update.lora is None
    )  # absent: old runs keep their hash
    for bad, field in (
        ({"r": 0}, "update.lora.r"),
        ({"target_modules": []}, "update.lora.target_modules"),
        ({"target_modules": ["q_proj", "q_proj"]}, "update.lora.target_modules"),
        ({"dropout": 1.0}, "update.lora.dropout"),
        ({"rank": 8}, "update.lora.rank"),
    ):
        with pytest.raises(ValueError, match=field.replace(".", r"\.")):
            Config.model_validate({"update": {"lora": bad}})
    with pytest.raises(ValueError, match="update.lora with update.nproc = 2"):
        Config.model_validate({"update": {"lora": {}, "nproc": 2}})
    res = runner.invoke(app, ["config"])
    assert res.exit_code == 0 and "# [update.lora]" in res.output and "#   r = 16" in res.output


def test_unknown_target_module_lists_the_models_layers(tiny_model: Path) -> None:
    from rlvr.config import ConfigError, LoraSection
    from rlvr.train.lora import trainable_policy

    with pytest.raises(ConfigError, match=r"update\.lora\.target_modules.*named .*q_proj"):
        trainable_policy(tiny_model, LoraSection(target_modules=["qkv"]), device=torch.device("cpu"), seed=0)


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory: pytest.TempPathFactory, small_config: Config, tiny_model: Path) -> Path:
    """Two LoRA iterations, evaluated at v0, v1 and v2."""
    folder = tmp_path_factory.mktemp("lora")
    cfg = _lora_cfg(small_config, folder)
    cfg = cfg.model_copy(update={"eval": cfg.eval.model_copy(update={"every": 1, "prompts": 8})})
    d = folder / "run"
    create_or_open(d, cfg, 2)
    stages.prepare(d)
    for i in range(2):
        stages.evaluate(d, i)
        stages.rollout(d, i), stages.verify(d, i), stages.update(d, i)
    stages.evaluate(d, 2)
    return d


@pytest.mark.slow
def test_a_lora_run_trains_the_adapter_and_leaves_the_base(lora_run: Path, tiny_model: Path) -> None:
    from safetensors.torch import load_file

    d = lora_run
    v0, v1, v2 = (d / f"policy/v00000{v}" for v in range(3))
    assert _sha(v0 / "model.safetensors") == _sha(tiny_model / "model.safetensors")  # the base is never written
    for v in (v1, v2):
        assert is_adapter(v) and not (v / "model.safetensors").exists()
        assert base_of(v) == v0.resolve()  # the reference resolves to v0 and its sha256 matches
        assert json.loads((v / BASE_REF).read_text())["path"] == "../v000000"
    a1, a2 = load_file(v1 / ADAPTER_WEIGHTS), load_file(v2 / ADAPTER_WEIGHTS)
    assert a1.keys() == a2.keys() and any("lora_A" in k for k in a1) and any("lora_B" in k for k in a1)
    assert {k.split(".")[-3] for k in a1} == set(LORA["target_modules"])  # ...q_proj.lora_A.weight
    assert all(not torch.equal(a1[k], a2[k]) for k in a1 if "lora_B" in k)  # every B moved in iteration 1
    assert all(a1[k].abs().sum() > 0 for k in a1 if "lora_B" in k)  # and in iteration 0 (from B = 0)
    # megabytes, not the model: adapter and its optimiser state against the weights a full checkpoint holds
    full = (v0 / "model.safetensors").stat().st_size
    assert (v2 / ADAPTER_WEIGHTS).stat().st_size < full / 20
    assert (v2 / "trainer_state.pt").stat().st_size < full / 5
    state = torch.load(v2 / "trainer_state.pt", weights_only=True)
    assert sum(s["exp_avg"].numel() for s in state["optimizer"]["state"].values()) == sum(t.numel() for t in a2.values())
    # the merged model (rollout, evaluate) is base + adapter as PEFT computes it, and differs from the base
    model, tok = load_policy(v2, torch.device("cpu"))
    ids = chat_ids(tok, "What is 2 + 3? Put the final answer inside <answer></answer>.")
    merged, ref = _logits(model, ids), _peft_logits(v2, ids)
    assert torch.allclose(merged, ref, atol=1e-5) and not torch.allclose(
        merged, _logits(load_policy(v0, torch.device("cpu"))[0], ids), atol=1e-3
    )
    # the run's tables, lineage and integrity check are as for any run
    steps = run_sql(d, "SELECT iteration, count(*) AS n FROM updates GROUP BY 1 ORDER BY 1").to_pylist()
    assert [r["iteration"] for r in steps] == [0, 1]
    evals = run_sql(d, "SELECT DISTINCT policy_version FROM evals ORDER BY 1").to_pylist()
    assert [r["policy_version"] for r in evals] == [0, 1, 2]
    res = runner.invoke(app, ["verify-store", str(d)], terminal_width=300)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["status", str(d)], terminal_width=300)
    assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_an_adapter_refuses_a_changed_base(lora_run: Path, tmp_path: Path) -> None:
    """The base's sha256 is checked on load: a copy of the run with v0's weights altered loads no adapter."""
    copy = tmp_path / "run"
    shutil.copytree(lora_run / "policy", copy / "policy")
    weights = copy / "policy/v000000/model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-8] ^= 1  # one bit of the last tensor
    weights.write_bytes(bytes(data))
    with pytest.raises(AdapterBaseError, match=r"model\.safetensors has sha256 .* not the"):
        load_policy(copy / "policy/v000002", torch.device("cpu"))
    shutil.rmtree(copy / "policy/v000000")
    with pytest.raises(AdapterBaseError, match="does not exist"):
        base_of(copy / "policy/v000002")


@pytest.mark.slow
def test_export_merge_gives_base_plus_adapter(lora_run: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    out = tmp_path / "exported"
    res = runner.invoke(app, ["export", str(lora_run), "--version", "2", "--out", str(out)], terminal_width=300)
    assert res.exit_code == 2 and "LoRA adapter" in res.output and "--merge" in res.output and not out.exists()
    res = runner.invoke(app, ["export", str(lora_run), "--version", "2", "--out", str(out), "--merge"], terminal_width=300)
    assert res.exit_code == 0, res.output
    assert (out / "model.safetensors").is_file() and not (out / ADAPTER_CONFIG).exists() and not (out / BASE_REF).exists()
    assert "rank 4" in (out / "README.md").read_text()
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)  # a plain HF folder: no PEFT needed
    _, tok = load_policy(lora_run / "policy/v000000", torch.device("cpu"))
    ids = chat_ids(tok, "What is 7 + 5? Put the final answer inside <answer></answer>.")
    assert torch.allclose(_logits(model, ids), _peft_logits(lora_run / "policy/v000002", ids), atol=1e-5)


@pytest.mark.slow
def test_rlvr_eval_of_a_lora_version_equals_its_evaluate_stage(lora_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    res = runner.invoke(app, ["eval", str(lora_run), "--version", "2", "--out", str(out)], terminal_width=300)
    assert res.exit_code == 0, res.output
    cols = "prompt_id, sample_idx, response_text"
    ours = run_sql(out, f"SELECT {cols} FROM responses ORDER BY 1, 2").to_pylist()
    stage = run_sql(lora_run, f"SELECT {cols} FROM evals WHERE iteration = 2 ORDER BY 1, 2").to_pylist()
    assert ours == stage and len(ours) == 8


RESUMER = textwrap.dedent(
    """
    import sys
    from rlvr import stages
    d = sys.argv[1]
    stages.prepare(d)
    for i in range(3):
        stages.rollout(d, i); stages.verify(d, i); stages.update(d, i)
    """
)


@pytest.mark.slow
def test_lora_exact_resume_after_kill(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    """3 LoRA iterations straight == 1 + SIGKILL inside iteration 1's update + resume: the same adapter
    bytes, config, base reference and optimiser state (dropout on: its RNG is part of what resumes)."""
    lora = {**LORA, "dropout": 0.1}
    cfg = _lora_cfg(small_config, tmp_path, epochs=2, minibatches=2, warmup_steps=3, lora=lora)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    for d in (straight, killed):
        create_or_open(d, cfg, 3)
    assert subprocess.run([sys.executable, "-c", RESUMER, str(straight)], env=env, check=False).returncode == 0
    proc = subprocess.run([sys.executable, "-c", RESUMER, str(killed)], env={**env, FAULT_ENV: "update:1:before_rename"})
    assert proc.returncode == -9
    assert (killed / "policy/v000001").is_dir() and not (killed / "policy/v000002").exists()
    assert subprocess.run([sys.executable, "-c", RESUMER, str(killed)], env=env, check=False).returncode == 0
    for v in (1, 2, 3):
        for name in (ADAPTER_WEIGHTS, ADAPTER_CONFIG, BASE_REF, "config.json", "trainer_state.pt"):
            assert _sha(straight / f"policy/v00000{v}" / name) == _sha(killed / f"policy/v00000{v}" / name), (v, name)
    state = torch.load(killed / "policy/v000003/trainer_state.pt", weights_only=True)
    assert state["global_step"] == 3 * 2 * 2 and state["next_iteration"] == 3
