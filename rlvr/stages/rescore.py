"""Re-scoring: every stored rollout of a run verified again under other verify settings, into a named scoring.

    rlvr rescore runs/demo --set verify.format=think_answer --name think
    rlvr rescore runs/demo --set 'verify.rewards=[{name = "short", sql = "short.sql"}]'
    rlvr sql runs/demo "SELECT scoring, avg(reward) FROM scorings GROUP BY 1"

Nothing is regenerated: the verify pass (rlvr.verify.scoring) runs on the committed rollout shards
with the run's verify section changed by the --set overrides (only verify.* fields), and writes
scorings/<name>/iteration=N/ with `scoring = <name>`, one commit record per iteration (stage
"rescore.<name>"). The run's own scoring (`scores`, scoring = 'default') is never touched, and
training keeps using it. A name is bound to its settings: the same name with the same settings is
skipped (resume), with other settings it is an error. Each iteration commits on its own, so a
failure leaves the iterations before it committed and nothing of the failing one.

Test: tests/integration/test_offline.py.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import pyarrow.compute as pc

from rlvr.config import Config, ConfigError, apply_overrides, hash_data, parse_config
from rlvr.errors import RlvrError
from rlvr.schema import DEFAULT_SCORING, ITERATION_GLOB, PREPARE, RESCORE_PREFIX, ROLLOUT, SCORES, iteration_of, shard_name
from rlvr.stages.lineage import upstream
from rlvr.store.commit import Outcome, StageTx, committed, run_stage, write_table
from rlvr.store.locks import writer_lock
from rlvr.store.records import CommitRecord, read_record, verified_record
from rlvr.store.run import Run, open_run
from rlvr.verify import plugins, scoring

log = logging.getLogger("rlvr")
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")


class RescoreError(RlvrError, ValueError):
    pass


def rollout_iterations(paths) -> list[int]:
    """Iterations whose rollouts are committed, in order."""
    found = (iteration_of(d) for d in paths.stages.glob(ITERATION_GLOB) if (d / f"{ROLLOUT}.json").is_file())
    return sorted(found)


def rescore(run_dir: str | Path, overrides: list[str], name: str | None = None) -> list[dict]:
    """Re-verify every committed rollout of the run under verify settings changed by `overrides`
    (SECTION.FIELD=VALUE, verify.* only) into scoring `name` (default: from the settings' hash).
    Returns one summary per iteration."""
    run = open_run(run_dir)
    for item in overrides:
        if not item.strip().startswith("verify."):
            raise RescoreError(
                f"--set {item!r}: rescore changes verify settings only (verify.FIELD=VALUE); other settings need a new run"
            )
    cfg = parse_config(apply_overrides(run.data, overrides), "--set")
    settings = cfg.verify.model_dump(mode="json")
    digests = [plugins.source_digest(p) for p in cfg.verify.rewards]
    name = name or "s" + hash_data({"verify": settings, "rewards": digests})[:8]
    if not NAME.match(name) or name == DEFAULT_SCORING:
        raise RescoreError(
            f"--name {name!r}: use letters, digits, '_' and '-' (up to 64), and not {DEFAULT_SCORING!r} (the run's own scoring)"
        )
    problems = verified_record(run.paths, PREPARE, None)  # every read checks the files' sha256 (rlvr.store.commit)
    iterations = rollout_iterations(run.paths)
    if problems is None or not iterations:
        raise RescoreError(f"{run_dir} has no committed rollouts to rescore; train or `rlvr import` first")
    stage = RESCORE_PREFIX + name
    out = []
    with writer_lock(run.paths.location):
        for i in iterations:
            rollouts = upstream(run, ROLLOUT, i, f"rescore({i})")
            inputs = {
                "verify": settings,
                "rewards": digests,
                "problems": problems.digest(),
                "rollouts": rollouts.digest(),
                "max_new_tokens": run.config.rollout.max_new_tokens,
            }
            if rec := committed(run.paths, stage, i, inputs):
                out.append({"iteration": i, "scoring": name, "rows": rec.rows, "skipped": True, **rec.extra})
                continue
            old = read_record(run.paths.record(stage, i))
            if old is not None and old.inputs.get("verify") != settings:
                raise RescoreError(
                    f"scoring {name!r} exists with other verify settings; choose another --name "
                    f"(its settings: `cat {run.paths.record(stage, i)}`)"
                )
            rec, _ = run_stage(run.paths, stage, i, inputs, _body(run, cfg, problems, rollouts, name, i, overrides))
            n, extra = rec.rows, rec.extra
            log.info("rescore %s %d: %d rows, reward mean %.3f", name, i, n, extra["reward_mean"])
            out.append({"iteration": i, "scoring": name, "rows": n, "skipped": False, **extra})
    return out


def _body(
    run: Run, cfg: Config, problems: CommitRecord, rollouts: CommitRecord, name: str, i: int, overrides: list[str]
) -> Callable[[StageTx], Outcome]:
    """The rescore stage's body for iteration i: the verify pass under `cfg.verify` into scorings/<name>/."""

    def body(tx: StageTx) -> Outcome:
        table, stats = scoring.score_with_stats(
            rollouts.parquet_files(run.paths.root),
            problems.parquet_files(run.paths.root),
            cfg.verify,
            max_new_tokens=run.config.rollout.max_new_tokens,
            hide=[run.paths.root],
            scoring=name,
        )
        n = write_table(table, SCORES, tx.output(run.paths.scoring_dir(name, i)) / shard_name(0))
        return Outcome(
            n,
            {
                "overrides": overrides,
                "correct": sum(table["correct"].to_pylist()),
                "reward_mean": pc.mean(table["reward"]).as_py(),
                "verifier_errors": stats["verifier_errors"],
            },
        )

    return body


__all__ = ["ConfigError", "RescoreError", "rescore"]
