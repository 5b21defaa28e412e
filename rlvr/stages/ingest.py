"""Offline RLVR: responses made elsewhere (a bigger model, an earlier run, people) as an iteration's rollouts.

    rlvr import runs/demo responses.jsonl [--iteration N]

The file (JSONL, or Parquet: one file or a folder of them) has one response per row:
  prompt_id or prompt    which problem (a train-split problem of the run): its id, or its exact text as
                         one of, in this order: the user turn rlvr renders (the template applied: the
                         problems table's `prompt`), the whole prompt the model gets (chat template
                         applied, as `rlvr prompts` prints it), or the dataset's own problem text
                         before the template (problems.question); a text that is several problems' at
                         the first rule it matches is an error: give prompt_id
  response               the response text (aliases: response_text, completion)
  logprobs               optional: log p of each response token under the model that wrote it
                         (alias response_logprobs); missing ones are stored as NULL and computed by
                         the trainer under the current policy, so the update's ratio starts at 1
  response_token_ids     optional: the tokens the logprobs belong to; otherwise the text is tokenized
                         with the policy's tokenizer (plus its end-of-sequence token when finish_reason
                         is 'stop')
  finish_reason          optional: 'stop' (default) or 'length'
  model                  optional: who wrote it (kept in rollouts.model)
The rows become rollouts/iteration=N/ with engine = 'import', committed like any rollout stage
(rlvr.store.commit): the rollout stage then skips iteration N, and verify and update run as usual.
Responses to one prompt form its group, numbered in file order.

Every row's prompt token ids come from rlvr.problems.prompts.prompt_ids, the function rollout renders with,
so an imported row and a rolled-out row of one problem have the same context.

A bad file (a missing column, an unknown prompt, a held-out prompt, logprobs that do not match the
tokens) is an ImportFileError naming the file, line (JSONL, counted as in the file) or row (Parquet,
from 0) and column; nothing is written.

Test: tests/integration/test_offline.py.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from transformers import AutoTokenizer

from rlvr.checks.start import create_or_open
from rlvr.errors import RlvrError
from rlvr.files import file_sha256, text_sha256
from rlvr.problems.prompts import prompt_ids
from rlvr.schema import PREPARE, ROLLOUT, ROLLOUTS, rollout_row, shard_name
from rlvr.stages.lineage import StageOrderError, stage_inputs
from rlvr.store.commit import Outcome, StageTx, committed, fetch_policy, run_stage, write_table
from rlvr.store.records import CommitRecord, read_record
from rlvr.store.run import Run, open_run

log = logging.getLogger("rlvr")

ENGINE = "import"
ALIASES = {
    "response": ("response", "response_text", "completion"),
    "logprobs": ("logprobs", "response_logprobs"),
}
SHARD_ROWS = 4096
WHERE = "\x00where"  # a row's place in its file (read_rows); no column of a file can have this name


class ImportFileError(RlvrError, ValueError):
    """A responses file that cannot be imported; the message names the file, row and column."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows as dicts: JSONL (.jsonl/.json, one object a line) or Parquet (file or folder).
    Each row carries where it came from under the key WHERE ('line N' of a JSONL file, 'row N' of
    Parquet), which error messages name."""
    if not path.exists():
        raise ImportFileError(f"{path}: no such file")
    if path.is_dir() or path.suffix == ".parquet":
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowInvalid, OSError) as err:
            raise ImportFileError(f"{path}: not a readable Parquet file or folder: {err}") from None
        return [r | {WHERE: f"row {k}"} for k, r in enumerate(rows)]
    rows = []
    with path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                raise ImportFileError(
                    f"{path} line {n}: not a UTF-8 JSON object ({err}); give JSONL, one object a line"
                ) from None
            if not isinstance(row, dict):
                raise ImportFileError(f"{path} line {n}: expected a JSON object, got {type(row).__name__}")
            rows.append(row | {WHERE: f"line {n}"})
    return rows


def _column(path: Path, rows: list[dict], names: tuple[str, ...], *, required: bool) -> str | None:
    """Which of `names` the file uses (the first row that has one decides)."""
    have = set().union(*(r.keys() for r in rows)) - {WHERE} if rows else set()
    found = [n for n in names if n in have]
    if not found and required:
        raise ImportFileError(
            f"{path}: no column {' / '.join(names)}; the file's columns are {', '.join(sorted(have)) or 'none'}"
        )
    return found[0] if found else None


def _problem_index(rows: list[dict], texts: dict[str, str]) -> list[dict[str, list[str]]]:
    """The text -> prompt_ids maps an imported `prompt` is matched against, in order: the rendered user
    turn (problems.prompt), the whole prompt text (`texts`: prompt_id -> chat template applied), and
    the dataset's own text (problems.question)."""
    maps: list[dict[str, list[str]]] = [{}, {}, {}]
    for r in rows:
        for m, text in zip(maps, (r["prompt"], texts.get(r["prompt_id"]), r.get("question")), strict=True):
            if text is not None and r["prompt_id"] not in m.setdefault(text, []):
                m[text].append(r["prompt_id"])
    return maps


def match_prompt(text: str, maps: list[dict[str, list[str]]]) -> list[str]:
    """The prompt_ids the first rule that knows `text` gives (rlvr's rendered user turn, then the
    whole prompt, then the dataset's own text); [] when none does."""
    return next((m[text] for m in maps if text in m), [])


def to_rollout_rows(path: Path, rows: list[dict], *, run: Run, problems: CommitRecord, iteration: int, tok) -> list[dict]:
    """Validate every row and turn it into a ROLLOUTS row; raises ImportFileError at the first bad one."""
    if not rows:
        raise ImportFileError(f"{path}: no rows")
    problem_rows = pq.read_table(problems.parquet_files(run.paths.root)).to_pylist()
    splits = {r["prompt_id"]: r["split"] for r in problem_rows}
    rendered = prompt_ids(tok, problem_rows, run.config.prompt, "train")
    maps = _problem_index(problem_rows, {pid: tok.decode(v) for pid, v in rendered.items()})
    id_col = _column(path, rows, ("prompt_id", "prompt"), required=True)
    resp_col = _column(path, rows, ALIASES["response"], required=True)
    lp_col = _column(path, rows, ALIASES["logprobs"], required=False)
    seen: dict[str, int] = {}
    out = []
    for k, r in enumerate(rows):
        where = f"{path} {r.get(WHERE, f'row {k}')}"
        pid = _row_problem(where, r.get(id_col), by_text=id_col == "prompt", splits=splits, maps=maps, root=run.paths.root)
        text, finish, ids, lps = _row_response(where, r, resp_col=resp_col, lp_col=lp_col, tok=tok)
        s = seen[pid] = seen.get(pid, -1) + 1
        out.append(
            rollout_row(
                iteration=iteration,
                prompt_id=pid,
                sample_idx=s,
                prompt_token_ids=rendered[pid],
                response_token_ids=ids,
                response_logprobs=lps,
                response_text=text,
                finish_reason=finish,
                engine=ENGINE,
                temperature=1.0,
                seed=0,
                model=r.get("model"),
            )
        )
    return out


def _row_problem(where: str, key: Any, *, by_text: bool, splits: dict[str, str], maps: list[dict], root: Path) -> str:
    """The train problem a row answers: its prompt_id (`key`), or with by_text the one problem whose
    text `key` is (match_prompt); a held-out problem is an error, training on it would leak the evaluation."""
    if not by_text:
        pid = key if isinstance(key, str) and key in splits else None
        if pid is None:
            raise ImportFileError(
                f"{where}: column prompt_id = {key!r} is not a problem of this run (see `rlvr sql "
                f'{root} "SELECT prompt_id, prompt FROM problems"`)'
            )
    else:
        found = match_prompt(key, maps) if isinstance(key, str) else []
        shown = key if not isinstance(key, str) or len(key) < 60 else key[:57] + "..."
        if not found:
            raise ImportFileError(
                f"{where}: column prompt = {shown!r} matches no problem's text exactly (the rendered user turn, the "
                "whole prompt as `rlvr prompts` prints it, or the dataset's own text); give prompt_id instead"
            )
        if len(found) > 1:
            raise ImportFileError(
                f"{where}: column prompt = {shown!r} is the text of {len(found)} problems ({', '.join(found[:3])}); "
                "give prompt_id instead"
            )
        pid = found[0]
    if splits[pid] != "train":
        raise ImportFileError(
            f"{where}: prompt_id {pid!r} is a held-out problem (split = {splits[pid]!r}); training on it would leak the evaluation"
        )
    return pid


def _row_response(
    where: str, r: dict, *, resp_col: str, lp_col: str | None, tok
) -> tuple[str, str, list[int], list[float] | None]:
    """A row's response text, finish_reason, token ids (given, else the text tokenized, plus end-of-
    sequence when it stopped) and logprobs (None: NULL), each checked."""
    text = r.get(resp_col)
    if not isinstance(text, str):
        raise ImportFileError(f"{where}: column {resp_col} = {text!r} is not a string")
    finish = r.get("finish_reason") or "stop"
    if finish not in ("stop", "length"):
        raise ImportFileError(f"{where}: column finish_reason = {finish!r}; use 'stop' or 'length'")
    ids = r.get("response_token_ids")
    if ids is None:
        eos = tok.eos_token_id
        ids = tok(text, add_special_tokens=False)["input_ids"] + ([eos] if finish == "stop" and eos is not None else [])
    lps = r.get(lp_col) if lp_col else None
    if lps is not None and (
        not isinstance(lps, list)
        or len(lps) != len(ids)
        or not all(isinstance(x, int | float) and math.isfinite(x) and x <= 0 for x in lps)
    ):  # None: NULL, filled by the trainer (rlvr.train.loop.fill_missing_logprobs)
        n = len(lps) if isinstance(lps, list) else type(lps).__name__
        raise ImportFileError(
            f"{where}: column {lp_col} has {n} values; expected {len(ids)} finite log-probabilities <= 0, one per "
            "response token (text tokens + end-of-sequence when finish_reason is 'stop'), or leave it out"
        )
    return text, finish, ids, lps


def next_iteration(run: Run) -> int:
    """The first iteration without committed rollouts."""
    i = 0
    while read_record(run.paths.record(ROLLOUT, i)) is not None:
        i += 1
    return i


def import_inputs(run: Run, iteration: int, file_digest: str) -> tuple[CommitRecord, dict]:
    """prepare's record and the rollout-stage fingerprint of an import: rollout(i)'s own inputs plus
    the file's digest (rlvr.stages.lineage.stage_inputs adds it back for a committed import, so rollout(i)
    keeps it). Needs policy v_i committed."""
    try:
        inputs = {k: v for k, v in stage_inputs(run, ROLLOUT, iteration).items() if k != "import"}
    except StageOrderError:
        raise StageOrderError(
            f"importing into iteration {iteration} needs policy v{iteration}: run iterations 0..{iteration - 1} "
            f"first (`rlvr train --run {run.paths.root} --iterations {iteration}`), or import into the "
            "next one"
        ) from None
    return read_record(run.paths.record(PREPARE, None)), inputs | {"import": file_digest}


def import_responses(run_dir: str | Path, file: str | Path, iteration: int | None = None) -> dict:
    """Import `file` as iteration `iteration`'s rollouts (default: the next iteration without any).
    Raises the run's target (run.iterations) to include it. Returns the commit's summary."""
    from rlvr.stages.preparation import prepare

    path = Path(file)
    rows = read_rows(path)  # a bad file fails before anything is touched
    prepare(run_dir)
    run = open_run(run_dir)
    i = next_iteration(run) if iteration is None else iteration
    if i < 0:
        raise ImportFileError(f"--iteration {i}: iterations start at 0")
    digest = file_sha256(path) if path.is_file() else _folder_digest(path)
    problems, inputs = import_inputs(run, i, digest)
    if rec := committed(run.paths, ROLLOUT, i, inputs):
        return {"iteration": i, "rows": rec.rows, "skipped": True}
    if (old := read_record(run.paths.record(ROLLOUT, i))) is not None:
        raise ImportFileError(
            f"iteration {i} of {run_dir} has rollouts already (engine {old.extra.get('engine')!r}); "
            f"import into the next one (--iteration {next_iteration(run)}) or into a new run"
        )
    tok = AutoTokenizer.from_pretrained(fetch_policy(run.paths, i))
    out_rows = to_rollout_rows(path, rows, run=run, problems=problems, iteration=i, tok=tok)

    def body(tx: StageTx) -> Outcome:
        out = tx.output(run.paths.table_dir("rollouts", i))
        for k in range(0, len(out_rows), SHARD_ROWS):
            write_table(out_rows[k : k + SHARD_ROWS], ROLLOUTS, out / shard_name(k // SHARD_ROWS))
        models = sorted({r["model"] for r in out_rows if r["model"]})
        return Outcome(
            len(out_rows),
            {
                "engine": ENGINE,
                "source": str(path.resolve()),
                "sha256": digest,
                "prompts": len({r["prompt_id"] for r in out_rows}),
                "models": models,
                "logprobs_missing": missing,
                "tokens": sum(r["num_response_tokens"] for r in out_rows),
            },
        )

    missing = sum(r["response_logprobs"] is None for r in out_rows)
    run_stage(run.paths, ROLLOUT, i, inputs, body)
    if run.config.run.iterations < i + 1:
        create_or_open(run_dir, None, i + 1)
    log.info(
        "import %d: %d responses to %d prompts from %s (%d without logprobs)",
        i,
        len(out_rows),
        len({r["prompt_id"] for r in out_rows}),
        path,
        missing,
    )
    return {"iteration": i, "rows": len(out_rows), "skipped": False, "logprobs_missing": missing}


def _folder_digest(path: Path) -> str:
    return text_sha256("".join(file_sha256(f) for f in sorted(path.rglob("*.parquet"))))
