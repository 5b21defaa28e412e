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
`adapter_facts` (a LoRA version needs --merge) -> load (rlvr.models.load.load_policy, which merges
an adapter into its checked base: W + (alpha / r) B A) -> save -> model card, all into a temporary
sibling of --out that is renamed into place: a failure or a kill leaves no half-written folder.

A LoRA version without --merge is refused, not exported as an adapter folder: an adapter needs its
base beside it, and the run's base (policy/v000000) is not part of an export, so the folder would
not load anywhere it was sent. `--merge` on a full-weights version changes nothing.

Test: tests/integration/test_eval_export.py.
"""

from __future__ import annotations

import importlib.metadata
import json
from datetime import UTC, datetime
from pathlib import Path

from rlvr.errors import RlvrError
from rlvr.models.lora import is_adapter
from rlvr.schema import ADAPTER_CONFIG, BASE_REF, EVALUATE, PREPARE, UPDATE
from rlvr.store.commit import fetch_policy
from rlvr.store.folders import check_new_folder, new_folder
from rlvr.store.records import verified_record
from rlvr.store.retention import kept_version
from rlvr.store.run import Run, open_run


class ExportError(RlvrError, ValueError):
    pass


def export_policy(run_dir: str | Path, version: int | None, out: str | Path, *, merge: bool = False) -> dict:
    """Write policy v_version of the run (the newest when None) as an HF folder at `out`; returns
    the facts its model card states. `merge`: a LoRA version's adapter merged into its base (without
    it such a version is refused)."""
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
    facts = card_facts(run, version, name=out.name) | {"lora": adapter_facts(policy, version, merge=merge)}
    with new_folder(out, flag="--out") as tmp:
        model, tok = load_policy(policy, torch.device("cpu"))  # an adapter comes back merged into its base
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "README.md").write_text(model_card(facts))
    return facts


def adapter_facts(policy_dir: Path, version: int, *, merge: bool) -> dict | None:
    """None for a full-weights version; for a LoRA adapter (with `merge`) what the card says of it:
    rank, alpha, target modules, and that it was merged. Without `merge` an ExportError, raised
    before anything is written."""
    if not is_adapter(policy_dir):
        return None
    if not merge:
        raise ExportError(
            f"policy v{version} is a LoRA adapter on the run's base model (v0), not full weights: add --merge to export "
            "the base with the adapter merged into it (a plain HF folder), or use the adapter in place "
            f"({policy_dir}, with its base named in {BASE_REF})"
        )
    conf = json.loads((policy_dir / ADAPTER_CONFIG).read_text())
    targets = conf["target_modules"]
    return {"r": conf["r"], "alpha": conf["lora_alpha"], "target_modules": targets, "merged": True}


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


def _lora_line(lora: dict) -> str:
    targets = lora["target_modules"]
    names = ", ".join(targets) if isinstance(targets, list) else str(targets)
    return f"adapter of rank {lora['r']} (alpha {lora['alpha']:g}) on {names}, merged into the base's weights"


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
        rlvr={k: facts[k] for k in keys}
        | {"held_out_accuracy": None if ev is None else ev["accuracy"]}
        | ({"lora": facts["lora"]} if facts.get("lora") else {}),
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
        *([("LoRA", _lora_line(facts["lora"]))] if facts.get("lora") else []),
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
