"""`rlvr export RUN --version N --out FOLDER`: one policy version as a clean HF folder with a model card.

    rlvr export runs/demo --version 3 --out exports/demo-v3
    python -c "from transformers import AutoModelForCausalLM as M; M.from_pretrained('exports/demo-v3')"
    vllm serve exports/demo-v3

The folder holds what transformers writes for the model and its tokenizer (config.json,
generation_config.json, model.safetensors, the tokenizer files and chat template) and README.md, a
model card with HF front matter saying what produced it: the run, its config hash, the version (the
iterations behind it), the base model, and the held-out accuracy of the run's evaluate(N), or "not
evaluated". Nothing of rlvr's is copied (trainer_state.pt: optimiser, RNG, data cursor): the weights
are loaded and saved again by transformers, so only what it writes is there.

The steps, in `export_policy`: the version's files checked against the record that wrote them ->
load (rlvr.models.load.load_policy) -> `merge_adapter` (the slot where a LoRA adapter will be folded
into its base; a full-weights folder passes through) -> save -> model card, all into a temporary
sibling of --out that is renamed into place: a failure or a kill leaves no half-written folder.

Test: tests/test_eval_export.py.
"""

from __future__ import annotations

import importlib.metadata
from datetime import UTC, datetime
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.schema import EVALUATE, PREPARE, UPDATE
from rlvr.store.commit import fetch_policy
from rlvr.store.folders import check_new_folder, new_folder
from rlvr.store.records import verified_record
from rlvr.store.retention import kept_version
from rlvr.store.run import Run, open_run

ADAPTER_CONFIG = "adapter_config.json"  # what PEFT writes beside a LoRA adapter's weights


class ExportError(RlvrError, ValueError):
    pass


def export_policy(run_dir: str | Path, version: int | None, out: str | Path) -> dict:
    """Write policy v_version of the run (the newest when None) as an HF folder at `out`; returns
    the facts its model card states."""
    import torch
    from transformers.utils import logging as hf_logging

    from rlvr.models.load import load_policy

    hf_logging.disable_progress_bar()  # "Loading weights" / "Writing model shards" bars: not the command's output

    out = Path(out).absolute()
    check_new_folder(out, flag="--out")  # before any weights are read
    run = open_run(run_dir)
    version = kept_version(run.paths, version)
    verified_record(run.paths, *_producer(version))  # the files as their stage wrote them (IntegrityError otherwise)
    policy = fetch_policy(run.paths, version)  # on object storage: its files into the working copy, checked
    facts = card_facts(run, version, name=out.name)
    with new_folder(out, flag="--out") as tmp:
        model, tok = load_policy(policy, torch.device("cpu"))
        model = merge_adapter(model, policy)
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "README.md").write_text(model_card(facts))
    return facts


def merge_adapter(model, policy_dir: Path):
    """The model a version's folder stands for, as full weights. Every folder holds full weights
    today, so `model` passes through. The slot for LoRA: a version that holds an adapter
    (adapter_config.json) will be loaded onto its base and merged here (PEFT's
    `PeftModel.from_pretrained(base, policy_dir).merge_and_unload()`), so that the export stays a
    plain model. Until then such a folder is refused rather than exported without its adapter."""
    if (policy_dir / ADAPTER_CONFIG).is_file():
        raise ExportError(
            f"{policy_dir} holds a LoRA adapter ({ADAPTER_CONFIG}); merging adapters on export is not supported yet"
        )
    return model


def _producer(version: int) -> tuple[str, int | None]:
    """The stage whose record lists policy v_version's files: prepare wrote v0, update(k) v_{k+1}."""
    return (PREPARE, None) if version == 0 else (UPDATE, version - 1)


def card_facts(run: Run, version: int, *, name: str) -> dict:
    """What the model card says: the run, config hash, version, base model, task, held-out accuracy."""
    cfg, paths = run.config, run.paths
    prepare = verified_record(paths, PREPARE, None)
    evaluated = verified_record(paths, EVALUATE, version)
    return {
        "name": name,
        "run": paths.location,
        "config_hash": run.config_hash,
        "policy_version": version,
        "objective": cfg.update.objective,
        "base_model": cfg.model.name or prepare.extra.get("base_model", cfg.model.path or "the embedded tiny model"),
        "tasks": [d.label for d in cfg.task.sources()],
        "evaluation": None if evaluated is None else {k: v for k, v in evaluated.extra.items() if k != "generation_seconds"},
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rlvr_version": importlib.metadata.version("rlvr"),
    }


def _accuracy_line(ev: dict | None) -> str:
    if ev is None:
        return "not evaluated (the run has no evaluate stage for this version; `rlvr eval RUN --version N` measures it)"
    k = ev["samples"]
    how = "greedy" if ev["temperature"] == 0 else f"{k} samples per problem at temperature {ev['temperature']:g}"
    extra = f", pass@{k} {ev[f'pass_at_{k}']:.4f}" if k > 1 else ""
    return f"{ev['accuracy']:.4f} on {ev['problems']} held-out problems ({how}{extra})"


def model_card(facts: dict) -> str:
    """README.md: HF model-card front matter (huggingface_hub's ModelCardData, with model-index when
    evaluated and an `rlvr` block of the facts) and a short body saying what produced the model."""
    from huggingface_hub import EvalResult, ModelCardData

    ev, v = facts["evaluation"], facts["policy_version"]
    results = []
    if ev is not None:
        results = [
            EvalResult(
                task_type="text-generation",
                dataset_type="rlvr-held-out",
                dataset_name=f"{' + '.join(facts['tasks'])} (held-out split, {ev['problems']} problems)",
                metric_type="accuracy",
                metric_value=ev["accuracy"],
                metric_name="held-out accuracy",
            )
        ]
    keys = ("run", "config_hash", "policy_version", "objective", "base_model", "tasks")
    data = ModelCardData(
        library_name="transformers",
        pipeline_tag="text-generation",
        tags=["rlvr", facts["objective"], *facts["tasks"]],
        model_name=facts["name"],
        eval_results=results or None,
        rlvr={k: facts[k] for k in keys} | {"held_out_accuracy": None if ev is None else ev["accuracy"]},
    )
    trained = (
        "the base model as the run copied it (no training)"
        if v == 0
        else f"the base model after {v} {facts['objective'].upper()} iteration(s)"
    )
    rows = [
        ("run", f"`{facts['run']}`"),
        ("config hash", f"`{facts['config_hash']}` (the first line of its run.toml)"),
        ("policy version", f"v{v}: {trained}"),
        ("base model", f"`{facts['base_model']}`"),
        ("task", ", ".join(facts["tasks"])),
        ("held-out accuracy", _accuracy_line(ev)),
        ("exported", f"{facts['exported_at']} by rlvr {facts['rlvr_version']}"),
    ]
    table = "\n".join(f"| {k} | {val} |" for k, val in rows)
    return (
        f"---\n{data.to_yaml()}\n---\n\n# {facts['name']}\n\n"
        f"Policy v{v} of an rlvr run (reinforcement learning from verifiable rewards): {trained}.\n\n"
        f"| | |\n|---|---|\n{table}\n\n"
        "## Use\n\n```python\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
        f'model = AutoModelForCausalLM.from_pretrained("{facts["name"]}")\n'
        f'tokenizer = AutoTokenizer.from_pretrained("{facts["name"]}")\n```\n\n'
        f"It was trained on prompts rendered with its chat template as `rlvr prompts {facts['run']}` shows them.\n"
    )
