"""Reward plug-ins: the user's own reward logic, in SQL or in Python, as named reward components.

A plug-in is one `[[verify.rewards]]` entry (rlvr.config.RewardPlugin). It scores every response
of the verify pass; its `weight * score` is added to the reward, and the row's `components` list
(rlvr.schema.COMPONENT) records name, weight, score, reward and reason. A score of None (Python) or
NULL / no row (SQL) means "cannot be scored": the row becomes verifier_error and is left out of its
group's baseline, never a silent 0.

- SQL: a .sql file with one SELECT over the relation `responses` (RESPONSES_SQL: the response, the
  built-in verdict and the problem's columns) returning prompt_id, sample_idx, score, reason. DuckDB
  runs it on its own connection with no file or network access and a locked configuration, the
  same rules as `rlvr sql`; any statement but a SELECT is refused.
- Python: 'module:function' or 'path/to/file.py:function' with the reward-function signature of
  TRL's GRPOTrainer, `f(completions, **kwargs) -> list[float | None]` (completions as strings, or
  TRL's conversational [{"role": "assistant", "content": ...}] lists), so existing TRL reward
  functions run unchanged. kwargs: prompts, completion_ids, and the problem's and the verdict's
  columns (answer, and its TRL-style alias solution, task, split, tests, sources, meta,
  extracted_answer, correct, ...). It runs in spawned worker processes, batch_size completions a
  call, each call under timeout_s: a batch that hangs is killed and its rows become verifier_error.

A plug-in that cannot be imported, raises, or returns the wrong number or kind of scores is a
RewardPluginError naming the plug-in, its file and the row: the verify stage then writes nothing.

Test: tests/unit/verify/test_plugins.py.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import signal
import sys
import traceback
from collections.abc import Callable
from contextlib import closing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from rlvr.config import RewardPlugin
from rlvr.errors import RlvrError
from rlvr.schema import COMPONENT
from rlvr.verify.pool import WorkerPool

STARTUP_S = 120.0  # a spawned worker imports rlvr and the plug-in's module; generous on a loaded 2-core machine

# The `responses` relation a plug-in sees: one row per response of the verify pass. Parameters:
# $rollouts, $problems (Parquet files); verify_rows is the verify pass's temp table (sql/verify.sql).
RESPONSES_SQL = """
SELECT r.iteration, r.prompt_id, r.sample_idx, r.response_text, r.response_token_ids, r.num_response_tokens,
       r.finish_reason, v.extracted_answer, v.extraction, v.format_ok, v.correct,
       p.task, p.split, p.prompt, p.answer, p.tests, p.sources, p.meta
FROM read_parquet($rollouts, hive_partitioning = false) AS r
JOIN verify_rows AS v USING (iteration, prompt_id, sample_idx)
JOIN read_parquet($problems, hive_partitioning = false) AS p USING (prompt_id)
ORDER BY r.iteration, r.prompt_id, r.sample_idx
"""
RESULT_COLUMNS = ("prompt_id", "sample_idx", "score", "reason")
# per-row plug-in totals, joined into sql/verify_rewards.sql (empty when there are no plug-ins)
PLUGIN_ROWS = pa.schema(
    [
        ("iteration", pa.int32()),
        ("prompt_id", pa.string()),
        ("sample_idx", pa.int32()),
        ("components", pa.list_(COMPONENT)),
        ("plugin_reward", pa.float64()),
        ("plugin_error", pa.bool_()),
        ("plugin_reason", pa.string()),
    ]
)


class RewardPluginError(RlvrError, ValueError):
    """A reward plug-in that cannot be used; the message names the plug-in, its file and the fix."""


def _where(p: RewardPlugin) -> str:
    return f"reward plug-in {p.name!r} ({p.sql or p.python})"


# ---- the plug-ins' sources ----------------------------------------------------------------


def _python_target(spec: str) -> tuple[str, str]:
    """'pkg.mod:fn' | 'path/file.py:fn' -> (module or file, function name)."""
    target, _, fn = spec.rpartition(":")
    return target, fn


def load_function(spec: str, name: str = "") -> Callable[..., Any]:
    """Import a plug-in's function; any failure is a RewardPluginError naming it."""
    target, fn = _python_target(spec)
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise FileNotFoundError(f"no file {path.resolve()} (paths are relative to the working directory)")
            mod_spec = importlib.util.spec_from_file_location(f"rlvr_reward_{name or path.stem}", path)
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            module = _import_from_cwd(target)
        func = getattr(module, fn)
    except Exception as err:
        raise RewardPluginError(
            f"reward plug-in {name!r}: python = {spec!r} cannot be imported: {type(err).__name__}: {err}"
        ) from None
    if not callable(func):
        raise RewardPluginError(f"reward plug-in {name!r}: {spec!r} is not a function")
    return func


def _import_from_cwd(name: str):
    """import_module with the working directory on sys.path, as `python -c` has it (the `rlvr`
    script's own sys.path[0] is its bin folder), so 'my_rewards:f' finds ./my_rewards.py."""
    cwd = str(Path.cwd())
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    finally:
        if added:
            sys.path.remove(cwd)


def source_digest(p: RewardPlugin) -> str:
    """sha256 of the plug-in's file (the .sql, the .py, or the module's file), so that a changed
    plug-in makes the verify stage's fingerprint change instead of keeping stale scores."""
    if p.sql is not None:
        path = Path(p.sql)
    else:
        target, _ = _python_target(p.python)
        if target.endswith(".py"):
            path = Path(target)
        else:
            try:
                found = _import_from_cwd(target).__spec__
            except Exception:
                found = None
            if found is None or not found.origin or not Path(found.origin).is_file():
                return "unknown"  # reported as an import error when the plug-in runs
            path = Path(found.origin)
    if not path.is_file():
        raise RewardPluginError(f"{_where(p)}: no file {path.resolve()}; paths are relative to the working directory")
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


# ---- SQL plug-ins -------------------------------------------------------------------------


def run_sql_plugin(p: RewardPlugin, responses: pa.Table) -> tuple[list[float | None], list[str]]:
    """(score, reason) per row of `responses`, in its order, from the plug-in's SELECT."""
    path = Path(p.sql)
    if not path.is_file():
        raise RewardPluginError(f"{_where(p)}: no file {path.resolve()}; paths are relative to the working directory")
    text = path.read_text()
    con = duckdb.connect()
    con.register("responses", responses)
    con.execute("SET enable_external_access = false")  # no read_csv('/etc/...'), no COPY, no ATTACH
    con.execute("SET lock_configuration = true")
    try:
        statements = con.extract_statements(text)
    except duckdb.Error as err:
        raise RewardPluginError(f"{path}: SQL does not parse: {err}".replace("\n", " ")) from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in statements) or "nothing"
        raise RewardPluginError(f"{path}: a SQL reward must be exactly one SELECT over `responses`; got {kinds}")
    try:
        result = con.sql(text).to_arrow_table()
    except duckdb.Error as err:
        raise RewardPluginError(
            f"{path}: {str(err).splitlines()[0]} (the relation is `responses`; its columns: {', '.join(responses.column_names)})"
        ) from None
    missing = [c for c in RESULT_COLUMNS if c not in result.column_names]
    if missing:
        raise RewardPluginError(
            f"{path}: the SELECT must return columns {', '.join(RESULT_COLUMNS)}; missing {', '.join(missing)}"
        )
    st = result.schema.field("score").type
    if not (pa.types.is_integer(st) or pa.types.is_floating(st) or pa.types.is_decimal(st) or pa.types.is_null(st)):
        first = result["score"][0].as_py() if result.num_rows else None
        raise RewardPluginError(f"{path}: column score = {first!r} ({st}) is not a number; return a DOUBLE (or NULL)")
    result = result.set_column(result.schema.get_field_index("score"), "score", result["score"].cast(pa.float64()))
    by_key: dict[tuple[str, int], tuple[Any, Any]] = {}
    for k, row in enumerate(result.select(list(RESULT_COLUMNS)).to_pylist()):
        key = (row["prompt_id"], row["sample_idx"])
        if key in by_key:
            raise RewardPluginError(f"{path}: row {k} repeats (prompt_id, sample_idx) = {key}; return one row per response")
        score = row["score"]
        if score is not None and not math.isfinite(score):
            raise RewardPluginError(f"{path}: row {k} ({key}): column score = {score!r} is not a finite number (or NULL)")
        by_key[key] = (None if score is None else float(score), row["reason"])
    scores, reasons = [], []
    for key in zip(responses["prompt_id"].to_pylist(), responses["sample_idx"].to_pylist(), strict=True):
        score, reason = by_key.get(key, (None, None))
        scores.append(score)
        reasons.append(str(reason) if reason is not None else ("no row returned for this response" if key not in by_key else ""))
    return scores, reasons


# ---- Python plug-ins ----------------------------------------------------------------------


def plugin_kwargs(rows: list[dict[str, Any]], completions: str) -> dict[str, list]:
    """TRL's reward-function arguments for a batch of `responses` rows: completions, prompts,
    completion_ids and every other column (answer also as `solution`, as TRL's math datasets name it)."""
    texts = [r["response_text"] for r in rows]
    prompts = [r["prompt"] for r in rows]
    if completions == "conversational":
        texts = [[{"role": "assistant", "content": t}] for t in texts]
        prompts = [[{"role": "user", "content": t}] for t in prompts]
    skip = {"response_text", "prompt", "response_token_ids"}
    out = {"completions": texts, "prompts": prompts, "completion_ids": [r["response_token_ids"] for r in rows]}
    out |= {k: [r[k] for r in rows] for k in rows[0] if k not in skip} if rows else {}
    out["solution"] = out.get("answer", [])
    return out


def _worker(conn: Connection, spec: str, name: str) -> None:
    """Worker loop: import the function, say "ready", then answer (batch, kwargs) with
    ("ok", batch, scores) or ("raised", batch, message); None stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        func = load_function(spec, name)
    except RewardPluginError as err:
        conn.send(("import_error", str(err)))
        return
    conn.send(("ready", None))
    while (msg := conn.recv()) is not None:
        batch, kwargs = msg
        try:
            conn.send(("ok", batch, list(func(**kwargs))))
        except Exception as err:
            where = traceback.extract_tb(err.__traceback__)[-1]
            conn.send(("raised", batch, f"{type(err).__name__}: {err} (at {where.filename}:{where.lineno})"))


def _check_scores(p: RewardPlugin, batch: int, scores: Any, n: int, size: int) -> list[float | None]:
    """The batch's scores as floats or None; anything else is the plug-in's error."""
    first = batch * size
    if not isinstance(scores, list) or len(scores) != n:
        got = f"{len(scores)} scores" if isinstance(scores, list) else type(scores).__name__
        raise RewardPluginError(
            f"{_where(p)}: returned {got} for a batch of {n} completions (rows {first}..{first + n - 1}); "
            "return one float or None per completion"
        )
    out: list[float | None] = []
    for k, s in enumerate(scores):
        if s is not None and (isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s)):
            raise RewardPluginError(f"{_where(p)}: row {first + k}: score {s!r} is not a finite float or None")
        out.append(None if s is None else float(s))
    return out


def _plugin_startup_error(p: RewardPlugin) -> Callable[[Any, int | None], RewardPluginError]:
    def error(msg: Any, exitcode: int | None) -> RewardPluginError:
        detail = msg[1] if isinstance(msg, tuple) and len(msg) == 2 and msg[0] == "import_error" else None
        return RewardPluginError(detail or f"{_where(p)}: its worker process did not start (exit code {exitcode})")

    return error


def run_python_plugin(p: RewardPlugin, rows: list[dict[str, Any]]) -> tuple[list[float | None], list[str], dict[str, int]]:
    """(score, reason) per row, and counts (batches, timeouts): batches of p.batch_size on p.workers
    spawned processes (rlvr.verify.pool); a batch over p.timeout_s is killed and its rows get score None."""
    load_function(p.python, p.name)  # import errors surface here, in one line, before any process starts
    batches = [rows[k : k + p.batch_size] for k in range(0, len(rows), p.batch_size)]
    scores: list[float | None] = [None] * len(rows)
    reasons = [""] * len(rows)
    timeouts = 0
    if not batches:
        return scores, reasons, {"batches": 0, "timeouts": 0}
    pool = WorkerPool(
        _worker,
        (p.python, p.name),
        size=min(p.workers, len(batches)),
        startup_s=STARTUP_S,
        ready=lambda msg: msg == ("ready", None),
        startup_error=_plugin_startup_error(p),
    )
    message = lambda b: (b, plugin_kwargs(batches[b], p.completions))  # noqa: E731
    with closing(pool.run(len(batches), message, timeout_s=p.timeout_s)) as outcomes:
        for out in outcomes:
            b, start = out.index, out.index * p.batch_size
            if out.lost == "died":
                raise RewardPluginError(
                    f"{_where(p)}: its worker process died (exit code {out.exitcode}) on rows {start}..; see its output above"
                )
            if out.lost == "timeout":  # hung: killed, its rows are unscorable, the others go on
                reasons[start : start + len(batches[b])] = [f"timeout: the batch took over {p.timeout_s:g}s"] * len(batches[b])
                timeouts += 1
                continue
            kind, _, result = out.reply
            if kind == "raised":
                raise RewardPluginError(f"{_where(p)} raised on rows {start}..{start + len(batches[b]) - 1}: {result}")
            scores[start : start + len(batches[b])] = _check_scores(p, b, result, len(batches[b]), p.batch_size)
    return scores, reasons, {"batches": len(batches), "timeouts": timeouts}


# ---- composition --------------------------------------------------------------------------


def _component_reason(name: str, score: float | None, weight: float, reason: str) -> str:
    if score is None:
        return f"verifier_error: reward_{name}: {reason or 'the plug-in returned no score'}; left out of the group baseline"
    return f"reward_{name} = {weight:g} * {score:g}" + (f" ({reason})" if reason else "")


def score_plugins(plugins: list[RewardPlugin], responses: pa.Table) -> tuple[pa.Table, dict[str, int]]:
    """Every plug-in on every response -> PLUGIN_ROWS (one row per response) and counts:
    plugin_errors (rows some plug-in could not score), plugin_timeouts (batches killed)."""
    keys = responses.select(["iteration", "prompt_id", "sample_idx"]).to_pylist()
    n = len(keys)
    comps: list[list[dict]] = [[] for _ in range(n)]
    stats = {"plugin_errors": 0, "plugin_timeouts": 0}
    rows = responses.to_pylist() if any(p.python for p in plugins) else []
    for p in plugins:
        if p.sql is not None:
            scores, reasons = run_sql_plugin(p, responses)
        else:
            scores, reasons, s = run_python_plugin(p, rows)
            stats["plugin_timeouts"] += s["timeouts"]
        for k in range(n):
            sc = scores[k]
            comps[k].append(
                {
                    "name": p.name,
                    "weight": p.weight,
                    "score": sc,
                    "reward": 0.0 if sc is None else p.weight * sc,
                    "reason": _component_reason(p.name, sc, p.weight, reasons[k]),
                }
            )
    out = []
    for key, cs in zip(keys, comps, strict=True):
        error = any(c["score"] is None for c in cs)
        stats["plugin_errors"] += error
        out.append(
            {
                **key,
                "components": cs,
                "plugin_reward": sum(c["reward"] for c in cs),
                "plugin_error": error,
                "plugin_reason": "".join("; " + c["reason"] for c in cs),
            }
        )
    return pa.Table.from_pylist(out, schema=PLUGIN_ROWS), stats


def empty_plugin_rows() -> pa.Table:
    return PLUGIN_ROWS.empty_table()
