"""Verification tier 1: DuckDB SQL decides every row it can (sql/verify.sql).

`score(...)` joins rollout shards with problems, extracts and normalises answers, compares
them numerically or exactly, and computes group advantages, all in one query. Rows SQL
cannot decide (symbolic math, code) go to Python verifiers in a later tier; arithmetic needs none.

Test: tests/test_verify.py runs the query on hand-computed rows.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from rlvr import sql
from rlvr.config import VerifySection
from rlvr.schema import SCORES


COUNT_ROLLOUTS = "SELECT count(*) FROM read_parquet($rollouts)"
UNKNOWN_PROMPTS = """
SELECT DISTINCT prompt_id FROM read_parquet($rollouts)
WHERE prompt_id NOT IN (SELECT prompt_id FROM read_parquet($problems))
ORDER BY 1 LIMIT 5
"""


class VerifyError(ValueError):
    pass


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(sql.load("macros"))
    return con


def score(rollout_files: list[Path], problem_files: list[Path], cfg: VerifySection) -> pa.Table:
    """One row per rollout row, in SCORES' schema."""
    if not rollout_files:
        raise VerifyError("verify got no rollout shards; run the rollout stage first")
    con = connect()
    params = {
        "rollouts": [str(p) for p in rollout_files],
        "problems": [str(p) for p in problem_files],
        "correct_reward": cfg.correct_reward,
        "format_reward": cfg.format_reward,
        "tol": cfg.numeric_tolerance,
        "eps": cfg.advantage_eps,
    }
    table = con.sql(sql.load("verify"), params=params).to_arrow_table()
    files = {"rollouts": params["rollouts"], "problems": params["problems"]}
    n_in = con.execute(COUNT_ROLLOUTS, {"rollouts": files["rollouts"]}).fetchone()[0]
    if table.num_rows != n_in:
        missing = con.execute(UNKNOWN_PROMPTS, files).fetchall()
        raise VerifyError(
            f"{n_in - table.num_rows} rollout rows have a prompt_id that is not in problems/ "
            f"(e.g. {', '.join(m[0] for m in missing)}); the rollouts were made for another problem set: "
            "start a new run instead of reusing this one"
        )
    return table.cast(SCORES)
