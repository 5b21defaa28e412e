"""The commands that take one policy out of a run: eval, export.

eval measures a run's policy version, or any HF model folder, on the run's problems, a shipped task
or a user's dataset, into a folder of Parquet files (rlvr.views.eval_folder); export writes a
version as a clean HF folder with a model card (rlvr.views.export). Neither writes into the run,
neither starts Prefect, and both refuse an --out that exists and is not empty before loading a model.

Test: tests/integration/test_eval_export.py, tests/unit/flows/test_cli.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rlvr.flows.cli.console import out, run_location
from rlvr.flows.cli.errors import user_errors


def local_folder(value: str) -> Path:
    """--out (typer's parser=): a local folder; a URI is refused (a Path would fold s3://b/x into s3:/b/x)."""
    if "://" in value:
        raise typer.BadParameter(f"{value} is a URI; --out is a local folder (the run may be on object storage, not the results)")
    return Path(value)


# eval's options, declared once here so that the command reads as what it does
EvalRun = Annotated[
    Path | None,
    typer.Argument(
        metavar="RUN",
        parser=run_location,
        help="Run folder or s3://bucket/prefix whose policy version to evaluate (or --model).",
    ),
]
EvalOut = Annotated[
    Path,
    typer.Option(
        "--out",
        metavar="FOLDER",
        parser=local_folder,
        help="New local folder for the results (Parquet files; must not hold files).",
    ),
]
EvalVersion = Annotated[
    int | None, typer.Option("--version", metavar="N", min=0, help="Policy version vN of RUN (default: the newest).")
]
EvalModel = Annotated[
    Path | None, typer.Option("--model", metavar="FOLDER", help="An HF model folder to evaluate instead of a run's policy.")
]
EvalConfig = Annotated[
    Path | None,
    typer.Option("--config", metavar="CONFIG.toml", help="With --model: the prompt, task and verifiers (default: the defaults)."),
]
EvalTask = Annotated[
    str | None,
    typer.Option(
        "--task", metavar="NAME", help="A shipped task's problems (arithmetic, logic, ...) instead of the configured ones."
    ),
]
EvalSet = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="SECTION.FIELD=VALUE",
        help="Override a config field, e.g. --set task.path=mine.jsonl for your dataset; on a run only task.*, "
        "eval.* and where it runs (rollout.engine, update.device, ...) (repeatable).",
    ),
]
EvalSplit = Annotated[str, typer.Option("--split", metavar="test|train", help="Which problems: held-out or training.")]
EvalSamples = Annotated[
    int | None,
    typer.Option("--samples", metavar="K", min=1, help="Responses per problem, for pass@k (default: eval.samples)."),
]
EvalTemperature = Annotated[
    float | None,
    typer.Option("--temperature", metavar="T", min=0.0, help="Sampling temperature; 0 = greedy (default: eval.temperature)."),
]
EvalPrompts = Annotated[
    int | None,
    typer.Option("--prompts", metavar="N", min=0, help="Evaluate N problems of the split; 0 = all (default: eval.prompts)."),
]


@user_errors
def eval_cmd(
    run: EvalRun = None,
    out_dir: EvalOut = ...,
    version: EvalVersion = None,
    model: EvalModel = None,
    config: EvalConfig = None,
    task: EvalTask = None,
    set_: EvalSet = None,
    split: EvalSplit = "test",
    samples: EvalSamples = None,
    temperature: EvalTemperature = None,
    prompts: EvalPrompts = None,
) -> None:
    """Evaluate a run's policy version, or any HF model folder, with the run's prompts and verifiers:
    greedy, or pass@k with --samples K --temperature T (the unbiased estimator). The results are a
    folder of Parquet files: `rlvr sql FOLDER "SELECT * FROM summary"` (views problems, responses,
    summary, pass_at_k), or any Parquet reader. With the run's [eval] settings, `rlvr eval RUN --version N`
    gives the accuracy of the run's own `evals` for iteration N."""
    from rlvr.views.eval_folder import EvalRequest, evaluate_into

    req = EvalRequest(
        out=out_dir,
        run=run,
        version=version,
        model=model,
        config=config,
        task=task,
        overrides=tuple(set_ or ()),
        split=split,
        samples=samples,
        temperature=temperature,
        prompts=prompts,
    )
    s = evaluate_into(req)
    what = f"{s['run']} v{s['policy_version']}" if s["run"] else s["model"]
    how = "greedy" if s["temperature"] == 0 else f"{s['samples']} samples at temperature {s['temperature']:g}"
    out.print(f"{what}: accuracy {s['accuracy']:.4f} on {s['problems']} {s['split']} problems ({how})", soft_wrap=True)
    out.print(f'wrote {out_dir}; query it: rlvr sql {out_dir} "SELECT k, pass_at_k FROM pass_at_k"', soft_wrap=True)


@user_errors
def export(
    run: Annotated[Path, typer.Argument(metavar="RUN", parser=run_location, help="Run folder or s3://bucket/prefix.")],
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out", metavar="FOLDER", parser=local_folder, help="New local folder for the HF model (must not hold files)."
        ),
    ] = ...,
    version: Annotated[
        int | None, typer.Option("--version", metavar="N", min=0, help="Policy version vN (default: the newest).")
    ] = None,
    merge: Annotated[
        bool,
        typer.Option("--merge", help="A LoRA run's version: merge its adapter into the base model (required for an adapter)."),
    ] = False,
) -> None:
    """Write policy version N as a clean HF folder (config, weights, tokenizer, generation config; no
    trainer state) that transformers and vLLM load as is, with a model card (README.md) naming the run,
    its config hash, the version, the base model and the held-out accuracy from the run's evals. A LoRA
    version ([update.lora]) needs --merge: the folder then holds the base with the adapter merged in."""
    from rlvr.views.export import export_policy

    facts = export_policy(run, version, out_dir, merge=merge)
    ev = facts["evaluation"]
    acc = "not evaluated" if ev is None else f"held-out accuracy {ev['accuracy']:.4f}"
    out.print(f"exported {run} v{facts['policy_version']} to {out_dir} ({acc})", soft_wrap=True)
