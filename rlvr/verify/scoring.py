"""Verification: the SQL tier decides every row it can, math-verify the rest, SQL the advantages.

`score(...)` runs, on one DuckDB connection:
  1. sql/verify_markers.sql: the answer each response marks (the answer contract: <answer> tags,
     \\boxed{}, '####', a final-answer line; reasoning in <think> never read; README "The answer
     contract"); sql/verify.sql: join them with problems, normalise (sql/normalise.sql) and decide plain numbers (sql_numeric), plain
     strings and logic verdicts (sql_exact); the rest is left to a Python tier in the temp table
     verify_rows, by verifier: `undecided` (symbolic), `code`, `logic` (a formula answer);
  2. the Python tiers (rlvr.verify.tiers.TIERS), each on its own rows only: math-verify in worker
     processes with a per-row timeout, the code sandbox (bubblewrap), logic truth tables. A crash or
     timeout is a `verifier_error: ...` reason, never a 0;
  3. sql/verify_citations.sql (retrieval rows only): each <cite> span looked up in the sentences of
     the sources (supported within one sentence, with the answer, bounded in length, not repeated);
  4. reward plug-ins (verify.rewards, rlvr.verify.plugins), when there are any: user SQL and Python
     scores over the decided rows, each a named, weighted component;
  5. sql/verify_rewards.sql (reward composition per task, verify.weights, plus the plug-ins' components
     and length shaping) and sql/verify_groups.sql (group advantages, leaving errored rows out of their
     group's baseline: their advantage is 0).
The result has exactly rlvr.schema.SCORES' columns, ordered by (iteration, prompt_id, sample_idx).

Test: tests/unit/verify/test_verify.py (hand-computed rows for every rule) and tests/unit/verify/test_mathcheck.py.
Bench: python bench/verify.py.
"""

from __future__ import annotations

import functools
import logging
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from rlvr.config import VerifySection
from rlvr.schema import DEFAULT_SCORING, SCORES
from rlvr.verify import logic, plugins, sql
from rlvr.verify.math import Check, math_verify_check
from rlvr.verify.tiers import TIERS, Tier, TierInputs, VerifyError

log = logging.getLogger(__name__)

COUNT_ROLLOUTS = "SELECT count(*) FROM read_parquet($rollouts, hive_partitioning = false)"
COUNT_ROWS = "SELECT count(*) FROM verify_rows"
COUNT_BY_VERIFIER = "SELECT verifier, count(*) FROM verify_rows GROUP BY verifier"
TASKS = "SELECT DISTINCT task FROM verify_rows ORDER BY 1"
UNKNOWN_PROMPTS = """
SELECT DISTINCT prompt_id FROM read_parquet($rollouts, hive_partitioning = false)
WHERE prompt_id NOT IN (SELECT prompt_id FROM read_parquet($problems, hive_partitioning = false))
ORDER BY 1 LIMIT 5
"""
MACROS = ("normalise", "symbolic", "markers", "citations")  # the macro files, each CREATE OR REPLACE MACRO only
WEIGHTS = pa.schema([("task", pa.string()), ("correct", pa.float64()), ("format", pa.float64()), ("citation", pa.float64())])


def verdict_macro() -> str:
    """norm_verdict(n) as SQL, from rlvr.verify.logic.VERDICT_PAIRS (SQL and Python share one table):
    n's curly apostrophes read as "'", trimmed, one VERDICT_FONTS command around it dropped, trimmed
    again, then looked up in VERDICT_PAIRS or read as one of VERDICT_SENTENCES whose reason
    VERDICT_DENIED lets through (rlvr.verify.logic.normalise_verdict)."""

    def quote(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    strip, lead = quote(logic.VERDICT_STRIP), quote(logic.VERDICT_LEAD)
    apostrophes = f"translate(n, {quote(logic.VERDICT_APOSTROPHES)}, {quote(chr(39) * len(logic.VERDICT_APOSTROPHES))})"
    key = f"rtrim(ltrim(regexp_replace(rtrim(ltrim({apostrophes}, {lead}), {strip}), {quote(logic.VERDICT_FONT)}, '\\1'), {lead}), {strip})"
    whens = []
    for verdict in dict.fromkeys(v for _, v in logic.VERDICT_PAIRS):
        keys = ", ".join(quote(k) for k, v in logic.VERDICT_PAIRS if v == verdict)
        whens.append(f"WHEN k IN ({keys}) THEN {quote(verdict)}")
    for verdict, sentence in logic.VERDICT_SENTENCES:  # a verdict in a sentence, its reason not denied
        reason = f"regexp_extract(k, {quote(sentence)}, 1)"
        whens.append(
            f"WHEN regexp_full_match(k, {quote(sentence)}) "
            f"AND NOT regexp_matches({reason}, {quote(logic.VERDICT_DENIED[verdict])}) THEN {quote(verdict)}"
        )
    # the key bound once (a lambda), not inlined in every WHEN
    return f"CREATE OR REPLACE MACRO norm_verdict(n) AS list_transform([{key}], lambda k: CASE {' '.join(whens)} END)[1];"


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


@functools.cache
def _database() -> duckdb.DuckDBPyConnection:
    """One in-memory database per process holding the macros (creating them binds each one: ~0.1 s)."""
    con = duckdb.connect()
    con.execute(digits_macro())
    for name in MACROS:
        con.execute(sql.load(name))
    con.execute(verdict_macro())
    return con


def connect() -> duckdb.DuckDBPyConnection:
    """A connection of its own (temp tables, registered tables and settings are per connection) to the database
    that holds the macros."""
    return _database().cursor()


def reward_weights(tasks: Sequence[str], cfg: VerifySection) -> pa.Table:
    """One row per task: its verify.weights (or the default ones)."""
    rows = [{"task": t, **cfg.weights_for(t).model_dump()} for t in tasks]
    return pa.Table.from_pylist(rows, schema=WEIGHTS)


def _apply_fills(con: duckdb.DuckDBPyConnection, fills: pa.Table) -> None:
    """Write a Python tier's verdicts (FILLS rows) into verify_rows (sql/verify_fill.sql)."""
    con.register("verify_fills", fills)
    con.execute(sql.load("verify_fill"))
    con.unregister("verify_fills")


def _decide_in_sql(con: duckdb.DuckDBPyConnection, files: dict[str, list[str]], cfg: VerifySection) -> int:
    """Pass 1 into verify_rows: the markers each response holds (sql/verify_markers.sql), then their
    reading and comparison (sql/verify.sql); every rollout row must have its problem. Returns the row count."""
    con.execute(
        sql.load("verify_markers"),
        {"rollouts": files["rollouts"], "format_mode": cfg.format, "multiple": cfg.multiple_answers},
    )
    con.execute(sql.load("verify"), {"problems": files["problems"], "tol": cfg.numeric_tolerance} | cfg.extraction_params())
    n_in = con.execute(COUNT_ROLLOUTS, {"rollouts": files["rollouts"]}).fetchall()[0][0]
    n_rows = con.execute(COUNT_ROWS).fetchall()[0][0]
    if n_rows != n_in:
        missing = con.execute(UNKNOWN_PROMPTS, files).fetchall()
        raise VerifyError(
            f"{n_in - n_rows} rollout rows have a prompt_id that is not in problems/ "
            f"(e.g. {', '.join(m[0] for m in missing)}); the rollouts were made for another problem set: "
            "start a new run instead of reusing this one"
        )
    return n_rows


def _run_tier(con: duckdb.DuckDBPyConnection, tier: Tier, files: dict[str, list[str]], inputs: TierInputs) -> dict[str, int]:
    """One Python tier on its rows (read only when it has some: re-reading response texts costs)."""
    rows = con.sql(sql.load(tier.rows_sql), params={k: files[k] for k in tier.params} or None).to_arrow_table()
    fills, counts = tier.decide(rows, inputs)
    _apply_fills(con, fills)
    return counts


def _check_citations(con: duckdb.DuckDBPyConnection, files: dict[str, list[str]], cfg: VerifySection) -> int:
    """sql/verify_citations.sql on the retrieval rows; returns how many had their citations checked."""
    con.execute(sql.load("verify_citations"), files | {"min_words": cfg.min_citation_words, "max_words": cfg.max_citation_words})
    return con.execute("SELECT count(*) FROM verify_rows WHERE citations IS NOT NULL").fetchall()[0][0]


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
    stats = {"rows": _decide_in_sql(con, files, cfg), "undecided": 0, "verifier_errors": 0, "timeouts": 0, "worker_restarts": 0}
    per_verifier = dict(con.execute(COUNT_BY_VERIFIER).fetchall())
    stats |= {t.stat: per_verifier.get(t.verifier, 0) for t in TIERS}
    inputs = TierInputs(cfg, check, hide)
    for tier in TIERS:
        if stats[tier.stat]:
            for key, n in _run_tier(con, tier, files, inputs).items():
                stats[key] += n
    tasks = [t for (t,) in con.execute(TASKS).fetchall()]
    stats["retrieval"] = _check_citations(con, files, cfg) if "retrieval" in tasks else 0
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
