"""Read-only SQL over a run, and the per-stage status table.

`connect_run(dir)` returns a DuckDB connection with one view per table in rlvr.schema.TABLES
(problems, rollouts, scores, updates) over exactly the files that commit records list, so a
half-written or uncommitted shard is never visible. Tables with no committed file yet are empty
views with the right columns. Only SELECT-like statements are accepted, external access is
limited to the run folder, and the configuration is locked.

    rlvr sql runs/demo "SELECT iteration, avg(reward) FROM scores GROUP BY 1 ORDER BY 1"
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from rlvr.errors import RlvrError
from rlvr.run import open_run
from rlvr.schema import EVALUATE, ITERATION_STAGES, PREPARE, STAGE_TABLE, TABLES, UPDATE, RunPaths
from rlvr.store import read_record

READ_ONLY_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class QueryError(RlvrError, ValueError):
    pass


def committed_files(paths: RunPaths) -> dict[str, list[Path]]:
    """Parquet files listed by commit records, per table, in iteration order."""
    files: dict[str, list[Path]] = {t: [] for t in TABLES}
    rec = read_record(paths.record(PREPARE, None))
    if rec:
        files["problems"] += rec.parquet_files(paths.root)
    for it_dir in sorted(paths.stages.glob("iteration=*")):
        i = int(it_dir.name.split("=")[1])
        for stage in (*ITERATION_STAGES, EVALUATE):
            if rec := read_record(paths.record(stage, i)):
                files[STAGE_TABLE[stage]] += rec.parquet_files(paths.root)
    return files


def connect_run(run_dir: str | Path) -> duckdb.DuckDBPyConnection:
    run = open_run(run_dir)
    con = duckdb.connect()
    for table, paths in committed_files(run.paths).items():
        if paths:
            listing = ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listing}], hive_partitioning = false)")
        else:
            con.register(f"_{table}_empty", pa.table({f.name: pa.array([], f.type) for f in TABLES[table]}))
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
    root = str(run.paths.root).replace("'", "''")
    con.execute(f"SET allowed_directories = ['{root}']")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def run_sql(run_dir: str | Path, query: str) -> pa.Table:
    """Execute one read-only query over the run's views."""
    con = connect_run(run_dir)
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as err:
        raise QueryError(f"SQL does not parse: {err}") from None
    if len(statements) != 1:
        raise QueryError(f"give exactly one statement, got {len(statements)}")
    if statements[0].type not in READ_ONLY_STATEMENTS:
        raise QueryError(
            f"only read-only queries are allowed (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN); got {statements[0].type.name}"
        )
    try:
        return con.sql(query).to_arrow_table()
    except duckdb.Error as err:
        raise QueryError(f"{err}\n(views: {', '.join(TABLES)}; `rlvr sql DIR \"DESCRIBE scores\"` lists columns)") from None


def status_rows(run_dir: str | Path) -> list[dict]:
    """One row per (iteration, stage) up to the run's target: committed or not, rows, seconds;
    `weights` of the rows that commit a policy (prepare: v0, update(i): v_{i+1}): whether its
    weights are still on disk or checkpoint retention pruned them."""
    from rlvr.retention import has_weights

    run = open_run(run_dir)
    rows = []
    for stage, i in run.config.stage_plan():
        rows.append(row := _row(i, stage, rec := read_record(run.paths.record(stage, i))))
        if stage in (PREPARE, UPDATE) and rec is not None:
            v = 0 if i is None else i + 1
            row["weights"] = f"v{v}" if has_weights(run.paths, v) else f"v{v} pruned"
    return rows


def _row(iteration: int | None, stage: str, rec) -> dict:
    return {
        "iteration": "" if iteration is None else iteration,
        "stage": stage,
        "committed": rec is not None,
        "rows": rec.rows if rec else None,
        "seconds": rec.seconds if rec else None,
        "created_at": rec.created_at if rec else None,
        "note": _note(stage, rec) if rec else "",
        "weights": "",
    }


def _note(stage: str, rec) -> str:
    x = rec.extra
    if stage == "rollout":
        start = f"{'warm, load' if x.get('warm') else 'cold, start'} "
        start += f"{x.get('weight_load_seconds' if x.get('warm') else 'engine_start_seconds', 0):.2f}s"
        return (f"{x.get('engine', '')} ({start}), {x.get('tokens', 0)} tokens in {x.get('generation_seconds', 0):.2f}s, "
                f"{x.get('tokens_per_s', 0):.0f} tok/s")  # fmt: skip
    if stage == "verify":
        return f"{x.get('correct', 0)} correct, reward mean {x.get('reward_mean', 0):.3f}"
    if stage == EVALUATE:
        k = x.get("samples", 1)
        return (f"v{rec.iteration} on {x.get('problems', 0)} held-out: accuracy {x.get('accuracy', 0):.3f}"
                + (f", pass@{k} {x.get(f'pass_at_{k}', 0):.3f}" if k > 1 else ""))  # fmt: skip
    if stage == "update":
        return f"-> v{x.get('policy_version')}, {x.get('groups_used', 0)} groups used, {x.get('groups_dropped', 0)} dropped"
    return f"{rec.rows} problems"
