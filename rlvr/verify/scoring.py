"""Verification: the SQL tier decides every row it can, math-verify the rest, SQL the advantages.

`score(...)` runs, on one DuckDB connection:
  1. sql/verify.sql: join rollout shards with problems, extract answers (<answer> tags, \\boxed{},
     the last number unless verify.extraction is strict for the task), normalise them (sql/macros.sql) and decide plain numbers (sql_numeric), plain
     strings and logic verdicts (sql_exact); the rest is left to a Python tier in the temp table
     verify_rows, by verifier: `undecided` (symbolic), `code`, `logic` (a formula answer);
  2. the Python tiers, each on its own rows only: rlvr.verify.math (math-verify in worker processes
     with a per-row timeout), rlvr.verify.code (code, bubblewrap), rlvr.verify.logic (truth tables). A crash or
     timeout is a `verifier_error: ...` reason, never a 0;
  3. sql/verify_citations.sql (retrieval rows only): each <cite> span looked up in the sentences of
     the sources (supported within one sentence, with the answer, bounded in length, not repeated);
  4. reward plug-ins (verify.rewards, rlvr.verify.plugins), when there are any: user SQL and Python
     scores over the decided rows, each a named, weighted component;
  5. sql/verify_rewards.sql (reward composition per task, verify.weights, plus the plug-ins' components
     and length shaping) and sql/verify_groups.sql (group advantages, leaving errored rows out of their
     group's baseline: their advantage is 0).
The result has exactly rlvr.schema.SCORES' columns, ordered by (iteration, prompt_id, sample_idx).

Test: tests/test_verify.py (hand-computed rows for every rule) and tests/test_mathcheck.py.
Bench: python bench/verify.py.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from rlvr.config import VerifySection
from rlvr.errors import RlvrError
from rlvr.schema import DEFAULT_SCORING, SCORES
from rlvr.verify import code as sandbox
from rlvr.verify import logic, plugins, sql
from rlvr.verify.math import Check, check_pairs, math_verify_check

log = logging.getLogger(__name__)

COUNT_ROLLOUTS = "SELECT count(*) FROM read_parquet($rollouts, hive_partitioning = false)"
COUNT_ROWS = "SELECT count(*) FROM verify_rows"
COUNT_BY_VERIFIER = (
    "SELECT count(*) FILTER (WHERE verifier = 'code'), count(*) FILTER (WHERE verifier = 'logic') FROM verify_rows"
)
TASKS = "SELECT DISTINCT task FROM verify_rows ORDER BY 1"
UNKNOWN_PROMPTS = """
SELECT DISTINCT prompt_id FROM read_parquet($rollouts, hive_partitioning = false)
WHERE prompt_id NOT IN (SELECT prompt_id FROM read_parquet($problems, hive_partitioning = false))
ORDER BY 1 LIMIT 5
"""
FILLS = pa.schema(
    [
        ("row_id", pa.int64()),
        ("correct", pa.bool_()),
        ("score", pa.float64()),
        ("verifier_error", pa.bool_()),
        ("reason", pa.string()),
        ("verifier", pa.string()),
    ]
)
WEIGHTS = pa.schema([("task", pa.string()), ("correct", pa.float64()), ("format", pa.float64()), ("citation", pa.float64())])


class VerifyError(RlvrError, ValueError):
    pass


def verdict_macro() -> str:
    """norm_verdict(n) as SQL, from rlvr.verify.logic.VERDICT_PAIRS (SQL and Python share one table)."""

    def quote(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    strip = quote(logic.VERDICT_STRIP)
    whens = []
    for verdict in dict.fromkeys(v for _, v in logic.VERDICT_PAIRS):
        keys = ", ".join(quote(k) for k, v in logic.VERDICT_PAIRS if v == verdict)
        whens.append(f"WHEN trim(n, {strip}) IN ({keys}) THEN {quote(verdict)}")
    return f"CREATE OR REPLACE MACRO norm_verdict(n) AS CASE {' '.join(whens)} END;"


@functools.cache
def digits_macro() -> str:
    """norm_digits(s) as SQL: every Unicode decimal digit (category Nd: Arabic-Indic, Devanagari,
    fullwidth, ...) -> its ASCII digit, and fullwidth ASCII (U+FF01..FF5E) -> ASCII, as NFKC reads them.
    translate() is slow with ~700 characters, so it runs only on texts that hold one of them."""
    src, dst = [], []
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if ch.isascii():
            continue
        if unicodedata.category(ch) == "Nd":
            src.append(ch), dst.append(str(unicodedata.decimal(ch)))
        elif 0xFF01 <= cp <= 0xFF5E:
            src.append(ch), dst.append(unicodedata.normalize("NFKC", ch))
    ranges: list[list[int]] = []
    for ch in src:
        if ranges and ranges[-1][1] == ord(ch) - 1:
            ranges[-1][1] = ord(ch)
        else:
            ranges.append([ord(ch), ord(ch)])
    cls = "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    frm, to = ("".join(x).replace("'", "''") for x in (src, dst))
    # strlen (bytes) = length (characters): ASCII, the common case, decided without a regex
    return (
        f"CREATE OR REPLACE MACRO norm_digits(s) AS CASE WHEN strlen(s) = length(s) THEN s "
        f"WHEN regexp_matches(s, '[{cls}]') THEN translate(s, '{frm}', '{to}') ELSE s END;"
    )


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(digits_macro())
    con.execute(sql.load("macros"))
    con.execute(verdict_macro())
    return con


def _fills(undecided: pa.Table, cfg: VerifySection, check: Check) -> tuple[pa.Table, dict[str, int]]:
    """math-verify on the undecided rows -> verify_fills rows (row_id, correct, verifier_error, reason)."""
    rows = undecided.to_pylist()
    verdicts, stats = check_pairs(
        [(r["gold"], r["pred"]) for r in rows], timeout_s=cfg.mathverify_timeout_s, workers=cfg.mathverify_workers, check=check
    )
    out = []
    for r, v in zip(rows, verdicts, strict=True):
        if v.error is not None:
            reason = (
                f"verifier_error: math_verify: {v.error} (gold {r['gold']!r}, got {r['pred']!r}); left out of the group baseline"
            )
        elif v.correct:
            reason = f"correct: {r['pred_norm']} = {r['gold_norm']} (math_verify)"
        else:
            reason = f"wrong: got {r['pred_norm']}, expected {r['gold_norm']} (math_verify: not equivalent)"
        if r["extraction"] in ("boxed", "last_number"):  # as verify.sql words it
            reason += f" (no <answer> tag; taken from {r['extraction']})"
        out.append(
            {
                "row_id": r["row_id"],
                "correct": bool(v.correct),
                "score": float(bool(v.correct)),
                "verifier_error": v.error is not None,
                "reason": reason,
                "verifier": "math_verify",
            }
        )
    return pa.Table.from_pylist(out, schema=FILLS), stats


def _code_fills(rows: pa.Table, cfg: VerifySection, hide: Sequence[Path]) -> pa.Table:
    """Sandbox tier: the response's fenced code + the problem's tests (assert program or stdin/stdout
    cases, rlvr.verify.code.make_check), run under bubblewrap. score = 1/0 (all_pass) or the fraction of
    tests passed (verify.code_reward). A missing code block is a 0 with its reason; the sandbox
    breaking raises."""
    items, out = [], []
    for r in rows.to_pylist():
        code = sandbox.extract_code(r["response_text"])
        if code is None:
            out.append(
                {
                    "row_id": r["row_id"],
                    "correct": False,
                    "score": 0.0,
                    "verifier_error": False,
                    "verifier": "sandbox",
                    "reason": "no_code: no fenced code block in the response",
                }
            )
            continue
        if not r["tests"]:
            raise VerifyError(f"code problem {r['prompt_id']!r} has no tests; fill the `tests` column of problems/")
        try:
            items.append((r["row_id"], sandbox.make_check(code, r["tests"])))
        except ValueError as err:
            raise VerifyError(f"code problem {r['prompt_id']!r}: bad `tests`: {err}") from None
    limits = sandbox.Limits(wall_seconds=cfg.code_timeout_s, memory_mb=cfg.code_memory_mb)
    verdicts = sandbox.check_many([t for _, t in items], limits=limits, hide=hide)
    for (row_id, _), v in zip(items, verdicts, strict=True):
        score = v.fraction if cfg.code_reward == "fraction" else float(v.passed)
        out.append(
            {
                "row_id": row_id,
                "correct": v.passed,
                "score": score,
                "verifier_error": False,
                "verifier": "sandbox",
                "reason": ("correct: all tests passed" if v.passed else v.reason) + " (sandbox)",
            }
        )
    return pa.Table.from_pylist(sorted(out, key=lambda x: x["row_id"]), schema=FILLS)


def _logic_fills(rows: pa.Table) -> pa.Table:
    """Logic tier: a formula answer must follow from the premises in the problem's meta and not be
    a tautology (rlvr.verify.logic.check_conclusion, truth tables). Answers are parsed, never evaluated as
    code; a checker exception on a row is that row's verifier_error, the others are scored."""
    out = []
    for r in rows.to_pylist():
        try:
            premises = json.loads(r["meta"])["premises"]
            correct, reason = logic.check_conclusion(premises, r["answer"])
            error = False
        except Exception as err:
            correct, error = False, True
            reason = f"verifier_error: logic: {type(err).__name__}: {err}; left out of the group baseline"
        out.append(
            {
                "row_id": r["row_id"],
                "correct": correct,
                "score": float(correct),
                "verifier_error": error,
                "reason": reason,
                "verifier": "logic",
            }
        )
    return pa.Table.from_pylist(out, schema=FILLS)


def reward_weights(tasks: Sequence[str], cfg: VerifySection) -> pa.Table:
    """One row per task: its verify.weights (or the default ones)."""
    rows = [{"task": t, **cfg.weights_for(t).model_dump()} for t in tasks]
    return pa.Table.from_pylist(rows, schema=WEIGHTS)


def _apply_fills(con: duckdb.DuckDBPyConnection, fills: pa.Table) -> None:
    """Write a Python tier's verdicts (FILLS rows) into verify_rows (sql/verify_fill.sql)."""
    con.register("verify_fills", fills)
    con.execute(sql.load("verify_fill"))
    con.unregister("verify_fills")


def score_with_stats(
    rollout_files: list[Path],
    problem_files: list[Path],
    cfg: VerifySection,
    *,
    check: Check = math_verify_check,
    max_new_tokens: int = 0,
    hide: Sequence[Path] = (),
    scoring: str = DEFAULT_SCORING,
) -> tuple[pa.Table, dict[str, int]]:
    """One row per rollout row, in SCORES' schema, and counts: rows, undecided (sent to math-verify),
    verifier_errors (rows left out of their baselines), timeouts, worker_restarts.

    `check(gold, pred) -> bool` is the math tier's checker (a module-level function; tests inject faulty ones).
    Code rows (task = 'code') run in the sandbox; `hide` lists folders it must not see (the run store).
    Extra counts: code, logic (rows of those tiers), retrieval (rows whose citations were checked), and
    with reward plug-ins plugin_errors (rows one could not score) and plugin_timeouts (batches killed).
    `scoring` fills the scoring column (a `rlvr rescore` name; the run's own is DEFAULT_SCORING)."""
    if not rollout_files:
        raise VerifyError("verify got no rollout shards; run the rollout stage first")
    con = connect()
    files = {"rollouts": [str(p) for p in rollout_files], "problems": [str(p) for p in problem_files]}
    con.execute(
        sql.load("verify"),
        files
        | {"tol": cfg.numeric_tolerance, "format_mode": cfg.format, "multiple": cfg.multiple_answers}
        | cfg.extraction_params(),
    )
    n_in = con.execute(COUNT_ROLLOUTS, {"rollouts": files["rollouts"]}).fetchall()[0][0]
    n_rows = con.execute(COUNT_ROWS).fetchall()[0][0]
    if n_rows != n_in:
        missing = con.execute(UNKNOWN_PROMPTS, files).fetchall()
        raise VerifyError(
            f"{n_in - n_rows} rollout rows have a prompt_id that is not in problems/ "
            f"(e.g. {', '.join(m[0] for m in missing)}); the rollouts were made for another problem set: "
            "start a new run instead of reusing this one"
        )
    undecided = con.sql(sql.load("verify_undecided")).to_arrow_table()
    stats = {"rows": n_rows, "undecided": undecided.num_rows, "verifier_errors": 0, "timeouts": 0, "worker_restarts": 0}
    if undecided.num_rows:
        fills, mstats = _fills(undecided, cfg, check)
        _apply_fills(con, fills)
        stats |= {
            "verifier_errors": mstats["errors"],
            "timeouts": mstats["timeouts"],
            "worker_restarts": mstats["worker_restarts"],
        }
    stats["code"], stats["logic"] = con.execute(COUNT_BY_VERIFIER).fetchall()[0]
    if stats["code"]:  # only then pay for re-reading the response texts
        code = con.sql(sql.load("verify_code"), params=files).to_arrow_table()
        _apply_fills(con, _code_fills(code, cfg, hide))
    if stats["logic"]:
        rows = con.sql(sql.load("verify_logic"), params={"problems": files["problems"]}).to_arrow_table()
        fills = _logic_fills(rows)
        stats["verifier_errors"] += sum(fills["verifier_error"].to_pylist())
        _apply_fills(con, fills)
    tasks = [t for (t,) in con.execute(TASKS).fetchall()]
    stats["retrieval"] = 0
    if "retrieval" in tasks:
        con.execute(
            sql.load("verify_citations"), files | {"min_words": cfg.min_citation_words, "max_words": cfg.max_citation_words}
        )
        stats["retrieval"] = con.execute("SELECT count(*) FROM verify_rows WHERE citations IS NOT NULL").fetchall()[0][0]
    con.register("reward_weights", reward_weights(tasks, cfg))
    plugin_rows = plugins.empty_plugin_rows()
    if cfg.rewards:
        responses = con.sql(plugins.RESPONSES_SQL, params=files).to_arrow_table()
        plugin_rows, pstats = plugins.score_plugins(cfg.rewards, responses)
        stats |= pstats
        stats["verifier_errors"] += pstats["plugin_errors"]
    con.register("plugin_rows", plugin_rows)
    params = {
        "scoring": scoring,
        "eps": cfg.advantage_eps,
        "estimator": cfg.advantage,
        "l_max": max_new_tokens,
        "l_cache": cfg.overlong_buffer if max_new_tokens else 0,
        "overlong": cfg.overlong_penalty,
    }
    con.execute(sql.load("verify_rewards"))
    table = con.sql(sql.load("verify_groups"), params=params).to_arrow_table()
    return table.cast(SCORES), stats


def score(
    rollout_files: list[Path],
    problem_files: list[Path],
    cfg: VerifySection,
    *,
    max_new_tokens: int = 0,
    hide: Sequence[Path] = (),
) -> pa.Table:
    """score_with_stats' table; the math-verify tier's counts go to the log (errors as a warning).
    max_new_tokens (rollout's) enables verify.overlong_buffer's length shaping; 0 turns it off;
    `hide`: folders the code sandbox must not see (the run store)."""
    table, stats = score_with_stats(rollout_files, problem_files, cfg, max_new_tokens=max_new_tokens, hide=hide)
    if stats["verifier_errors"]:
        log.warning(
            "verify: %(verifier_errors)d of %(rows)d rows got verifier_error (timeouts %(timeouts)d, "
            "worker restarts %(worker_restarts)d); they are left out of their group baselines",
            stats,
        )
    log.info("verify: %(rows)d rows, %(undecided)d sent to math-verify, %(verifier_errors)d verifier errors", stats)
    return table
