"""prepare(run): the problems of every configured dataset as problems/*.parquet, and policy v0."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from rlvr.errors import RlvrError
from rlvr.files import file_sha256
from rlvr.models.load import load_policy
from rlvr.models.tiny import base_model
from rlvr.problems import datasets, readers
from rlvr.schema import (
    PREPARE,
    PROBLEMS,
    shard_name,
)
from rlvr.stages.base import StageResult, _stage
from rlvr.stages.lineage import stage_inputs
from rlvr.store.commit import Outcome, StageTx, write_table
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.verify import code as code_sandbox

log = logging.getLogger("rlvr")


class SandboxUnavailable(RlvrError, RuntimeError):
    pass


def _check_sandbox(cfg) -> None:
    """A run with code problems needs the sandbox: say so at its start (prepare runs first on every
    start, committed or not), not when the first verify stage reaches the code rows."""
    if "code" in datasets.verifiers(cfg.task) and (problem := code_sandbox.sandbox_problem()) is not None:
        raise SandboxUnavailable(f"the task has code problems, and {problem}")


def prepare(run_dir: str | Path) -> StageResult:
    """problems/*.parquet from the configured datasets (each source file's sha256 recorded), and policy
    v0 from the configured model. Once committed, the run uses its own copy of the problems: a
    source file changed since is reported (a warning naming it), never read again."""
    run = open_run(run_dir)
    cfg, paths = run.config, run.paths
    _check_sandbox(cfg)
    inputs = stage_inputs(run, PREPARE, None)

    def body(tx: StageTx) -> Outcome:
        digests = readers.source_digests(cfg.task)
        rows = datasets.load_problems(cfg.task, cfg.prompt)  # every bad row fails here, before anything is written
        if readers.source_digests(cfg.task) != digests:
            raise readers.DatasetError("a dataset file changed while prepare read it; run prepare again")
        base = base_model(cfg)
        if not (base / "config.json").is_file():
            raise FileNotFoundError(f"model.path = {str(base)!r} has no config.json; point it at a HF-format model folder")
        n = write_table(rows, PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
        model, tok = load_policy(base, torch.device("cpu"))
        pol = tx.output(paths.policy_dir(0))
        model.save_pretrained(pol)
        tok.save_pretrained(pol)
        log.info("prepare: %d problems, policy v0 from %s", n, base)
        return Outcome(n, {"base_model": str(base), "sources": digests})

    result = _stage(run, PREPARE, None, inputs, body)
    if result.skipped:  # the run keeps its copy; say so when a source has changed since
        report_changed_sources(read_record(paths.record(PREPARE, None)).extra.get("sources", {}))
    return result


def changed_sources(recorded: dict[str, str]) -> list[str]:
    """The recorded source files whose sha256 differs now (or that are gone)."""
    out = []
    for path, digest in recorded.items():
        p = Path(path)
        now = file_sha256(p) if p.is_file() else None
        if now != digest:
            out.append(f"{path} ({'deleted' if now is None else f'sha256 {digest[:12]} -> {now[:12]}'})")
    return out


def report_changed_sources(recorded: dict[str, str]) -> list[str]:
    """Warn about dataset files changed since prepare copied them; the run keeps its copy."""
    changed = changed_sources(recorded)
    if changed:
        log.warning(
            "dataset source changed after this run's prepare, so this run keeps its own copy in problems/ and "
            "ignores the change; start a new run to train on it: %s",
            "; ".join(changed),
        )
    return changed
