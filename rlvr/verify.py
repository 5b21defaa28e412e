"""Verification: the SQL tier decides every row it can, math-verify the rest, SQL the advantages.

`score(...)` runs, on one DuckDB connection:
  1. sql/verify.sql: join rollout shards with problems, extract answers (<answer> tags, \\boxed{},
     last number), normalise them (sql/macros.sql) and decide plain numbers (sql_numeric) and plain
     strings (sql_exact); symbolic rows are left `undecided` in the temp table verify_rows;
  2. rlvr.mathcheck: only the undecided rows, math-verify in worker processes with a per-row
     timeout (verifier math_verify); a crash or timeout is a `verifier_error: ...` reason, never a 0;
  3. sql/verify_groups.sql: rewards and group advantages, leaving errored rows out of their
     group's baseline (their advantage is 0).
The result has exactly rlvr.schema.SCORES' columns, ordered by (iteration, prompt_id, sample_idx).

Test: tests/test_verify.py (hand-computed rows for every rule) and tests/test_mathcheck.py.
Bench: python bench/verify.py.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from rlvr import sandbox, sql
from rlvr.config import VerifySection
from rlvr.mathcheck import Check, check_pairs, math_verify_check
from rlvr.schema import SCORES

log = logging.getLogger(__name__)

COUNT_ROLLOUTS = "SELECT count(*) FROM read_parquet($rollouts, hive_partitioning = false)"
COUNT_ROWS = "SELECT count(*) FROM verify_rows"
COUNT_CODE_ROWS = "SELECT count(*) FROM verify_rows WHERE verifier = 'code'"
UNKNOWN_PROMPTS = """
SELECT DISTINCT prompt_id FROM read_parquet($rollouts, hive_partitioning = false)
WHERE prompt_id NOT IN (SELECT prompt_id FROM read_parquet($problems, hive_partitioning = false))
ORDER BY 1 LIMIT 5
"""
FILLS = pa.schema(
    [("row_id", pa.int64()), ("correct", pa.bool_()), ("verifier_error", pa.bool_()), ("reason", pa.string()),
     ("verifier", pa.string())]
)


class VerifyError(ValueError):
    pass


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(sql.load("macros"))
    return con


def _fills(undecided: pa.Table, cfg: VerifySection, check: Check) -> tuple[pa.Table, dict[str, int]]:
    """math-verify on the undecided rows -> verify_fills rows (row_id, correct, verifier_error, reason)."""
    rows = undecided.to_pylist()
    verdicts, stats = check_pairs([(r["gold"], r["pred"]) for r in rows], timeout_s=cfg.mathverify_timeout_s,
                                  workers=cfg.mathverify_workers, check=check)  # fmt: skip
    out = []
    for r, v in zip(rows, verdicts, strict=True):
        if v.error is not None:
            reason = f"verifier_error: math_verify: {v.error} (gold {r['gold']!r}, got {r['pred']!r}); left out of the group baseline"
        elif v.correct:
            reason = f"correct: {r['pred_norm']} = {r['gold_norm']} (math_verify)"
        else:
            reason = f"wrong: got {r['pred_norm']}, expected {r['gold_norm']} (math_verify: not equivalent)"
        if r["extraction"] in ("boxed", "last_number"):  # as verify.sql words it
            reason += f" (no <answer> tag; taken from {r['extraction']})"
        out.append({"row_id": r["row_id"], "correct": bool(v.correct), "verifier_error": v.error is not None, "reason": reason,
                    "verifier": "math_verify"})
    return pa.Table.from_pylist(out, schema=FILLS), stats


def _code_fills(rows: pa.Table, cfg: VerifySection, hide: Sequence[Path]) -> pa.Table:
    """Sandbox tier: the response's fenced code + the problem's tests, run under bubblewrap
    (rlvr.sandbox). A missing code block is a 0 with its reason; the sandbox breaking raises."""
    items, out = [], []
    for r in rows.to_pylist():
        code = sandbox.extract_code(r["response_text"])
        if code is None:
            out.append({"row_id": r["row_id"], "correct": False, "verifier_error": False, "verifier": "sandbox",
                        "reason": "no_code: no fenced code block in the response"})  # fmt: skip
        elif not r["tests"]:
            raise VerifyError(f"code problem of row {r['row_id']} has no tests; fill the `tests` column of problems/")
        else:
            items.append((r["row_id"], sandbox.AssertTests(code, r["tests"])))
    limits = sandbox.Limits(wall_seconds=cfg.code_timeout_s, memory_mb=cfg.code_memory_mb)
    verdicts = sandbox.check_many([t for _, t in items], limits=limits, hide=hide)
    for (row_id, _), v in zip(items, verdicts, strict=True):
        out.append({"row_id": row_id, "correct": v.passed, "verifier_error": False, "verifier": "sandbox",
                    "reason": ("correct: all tests passed" if v.passed else v.reason) + " (sandbox)"})  # fmt: skip
    return pa.Table.from_pylist(sorted(out, key=lambda x: x["row_id"]), schema=FILLS)


def _apply_fills(con: duckdb.DuckDBPyConnection, fills: pa.Table, rewards: dict) -> None:
    """Write a Python tier's verdicts (FILLS rows) into verify_rows (sql/verify_fill.sql)."""
    con.register("verify_fills", fills)
    con.execute(sql.load("verify_fill"), rewards)
    con.unregister("verify_fills")


def score_with_stats(
    rollout_files: list[Path], problem_files: list[Path], cfg: VerifySection, *, check: Check = math_verify_check,
    max_new_tokens: int = 0, hide: Sequence[Path] = (),
) -> tuple[pa.Table, dict[str, int]]:
    """One row per rollout row, in SCORES' schema, and counts: rows, undecided (sent to math-verify),
    verifier_errors (rows left out of their baselines), timeouts, worker_restarts.

    `check(gold, pred) -> bool` is the tier-2 checker (a module-level function; tests inject faulty ones).
    Code rows (task = 'code') run in the sandbox; `hide` lists folders it must not see (the run store)."""
    if not rollout_files:
        raise VerifyError("verify got no rollout shards; run the rollout stage first")
    con = connect()
    files = {"rollouts": [str(p) for p in rollout_files], "problems": [str(p) for p in problem_files]}
    rewards = {"correct_reward": cfg.correct_reward, "format_reward": cfg.format_reward}
    con.execute(sql.load("verify"), files | rewards | {"tol": cfg.numeric_tolerance})
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
        _apply_fills(con, fills, rewards)
        stats |= {"verifier_errors": mstats["errors"], "timeouts": mstats["timeouts"], "worker_restarts": mstats["worker_restarts"]}
    stats["code"] = con.execute(COUNT_CODE_ROWS).fetchall()[0][0]
    if stats["code"]:  # only then pay for re-reading the response texts
        code = con.sql(sql.load("verify_code"), params=files).to_arrow_table()
        _apply_fills(con, _code_fills(code, cfg, hide), rewards)
    params = {"eps": cfg.advantage_eps, "estimator": cfg.advantage, "l_max": max_new_tokens,
              "l_cache": cfg.overlong_buffer if max_new_tokens else 0, "overlong": cfg.overlong_penalty}  # fmt: skip
    table = con.sql(sql.load("verify_groups"), params=params).to_arrow_table()
    return table.cast(SCORES), stats


def score(rollout_files: list[Path], problem_files: list[Path], cfg: VerifySection, *, max_new_tokens: int = 0,
          hide: Sequence[Path] = ()) -> pa.Table:  # fmt: skip
    """score_with_stats' table; the math-verify tier's counts go to the log (errors as a warning).
    max_new_tokens (rollout's) enables verify.overlong_buffer's length shaping; 0 turns it off;
    `hide`: folders the code sandbox must not see (the run store)."""
    table, stats = score_with_stats(rollout_files, problem_files, cfg, max_new_tokens=max_new_tokens, hide=hide)
    if stats["verifier_errors"]:
        log.warning("verify: %(verifier_errors)d of %(rows)d rows got verifier_error (timeouts %(timeouts)d, "
                    "worker restarts %(worker_restarts)d); they are left out of their group baselines", stats)  # fmt: skip
    log.info("verify: %(rows)d rows, %(undecided)d sent to math-verify, %(verifier_errors)d verifier errors", stats)
    return table
