"""The commands about a run's data without training it: import, rescore, prompts.

import brings responses made elsewhere in as an iteration's rollouts; rescore re-verifies every
stored rollout into a named scoring; prompts prints the prompts exactly as the model gets them.
None of them starts Prefect.

Test: tests/integration/test_offline.py (import, rescore), tests/integration/test_prompt_path.py (prompts), tests/unit/flows/test_cli.py.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rlvr.flows.cli.console import out, run_location
from rlvr.flows.cli.errors import fail, user_errors


@user_errors
def import_cmd(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix (created with --config or --set when new)."
        ),
    ],
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="JSONL or Parquet: prompt_id or prompt, response, optional logprobs, response_token_ids, finish_reason, model.",
        ),
    ],
    iteration: Annotated[
        int | None, typer.Option(metavar="N", min=0, help="Iteration to fill (default: the next without rollouts).")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", metavar="CONFIG.toml", help="TOML config of a new run.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="SECTION.FIELD=VALUE", help="Override a field of a new run's config (repeatable)."),
    ] = None,
) -> None:
    """Bring responses made elsewhere into a run as an iteration's rollouts (engine = 'import');
    then `rlvr resume DIR` verifies and trains on them (update.objective = "grpo" or "rft")."""
    import logging

    from rlvr.checks.start import create_or_open
    from rlvr.config import Config, apply_overrides, load_config, parse_config
    from rlvr.stages.ingest import import_responses
    from rlvr.store.locks import writer_lock

    logging.getLogger("rlvr").setLevel(logging.INFO)
    cfg = load_config(config) if config is not None else None
    if set_:
        cfg = parse_config(apply_overrides((cfg or Config()).model_dump(mode="json", exclude_none=True), set_), "--set")
    create_or_open(run, cfg, None)
    with writer_lock(run):
        got = import_responses(run, file, iteration)
    verb = "already imported" if got["skipped"] else "imported"
    out.print(f"{verb}: {got['rows']} responses as iteration {got['iteration']} of {run}; next: rlvr resume {run}")


@user_errors
def rescore(
    run: Annotated[Path, typer.Argument(metavar="DIR", parser=run_location, help="Run folder or s3://bucket/prefix.")],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="verify.FIELD=VALUE",
            help="A changed verify setting, e.g. --set verify.format=think_answer "
            'or --set \'verify.rewards=[{name = "short", sql = "short.sql"}]\' (repeatable).',
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="Name of the new scoring (default: a hash of its settings).")
    ] = None,
) -> None:
    """Re-verify every stored rollout under changed verify settings into a named scoring (nothing is
    regenerated); compare with `rlvr sql DIR "SELECT scoring, avg(reward) FROM scorings GROUP BY 1"`."""
    from rlvr.stages.rescore import rescore as rescore_run

    got = rescore_run(run, set_ or [], name)
    for g in got:
        out.print(
            f"scoring {g['scoring']} iteration {g['iteration']}: {g['rows']} rows, {g['correct']} correct, "
            f"reward mean {g['reward_mean']:.4f}{' (already committed)' if g['skipped'] else ''}"
        )
    out.print(f'compare: rlvr sql {run} "SELECT scoring, iteration, avg(reward) FROM scorings GROUP BY ALL ORDER BY ALL"')


@user_errors
def prompts(
    target: Annotated[Path, typer.Argument(metavar="CONFIG.toml|DIR", help="A TOML config or a run folder.")],
    n: Annotated[int, typer.Option("--n", metavar="N", min=0, help="How many prompts to show.")] = 3,
    split: Annotated[str, typer.Option("--split", metavar="train|test", help="Which split's prompts.")] = "train",
) -> None:
    """Print the first N prompts exactly as the model gets them (chat template applied) and their token counts."""
    from rlvr.views.preview import preview

    if split not in ("train", "test"):
        fail(ValueError(f"--split must be train or test, got {split!r}"))
    shown = preview(target, n, split)
    for p in shown:
        sys.stdout.write(
            f"==== {p['prompt_id']} (dataset {p['dataset']}, {p['split']}): {p['tokens']} tokens ====\n{p['text']}\n"
        )
    if not shown:
        sys.stdout.write(f"no {split} prompts\n")
