"""Read-only SQL over a run, and the per-stage status table.

`connect_run(dir)` returns a DuckDB connection with one view per table in rlvr.schema.TABLES
 (problems, rollouts, scores, updates, evals, scorings) over exactly the files that commit records
list, each checked against its recorded sha256, so a half-written, uncommitted or altered shard is
never visible. `scores` is the run's own scoring; `scorings` adds every `rlvr rescore` name's rows
(column `scoring`), and `reward_components` shows the reward plug-ins' components of every scoring,
one row each. Tables with no committed file yet are empty views with the right columns.

Read-only by construction, in two layers:
1. `check_query` (rlvr/sqlguard.py) accepts one plain SELECT / WITH / VALUES / DESCRIBE /
   SUMMARIZE / SHOW, judged by DuckDB's own parser, and refuses every other statement (EXPLAIN
   ANALYZE included), file-reading or catalogue table functions and FROM 'file' scans.
2. The connection itself cannot touch a file: the views are pyarrow datasets over the committed
   files (pyarrow, not DuckDB, opens them), DuckDB's local file system is disabled, spilling to
   disk is off (no `.tmp/` in the working directory), and the configuration is locked. A statement
   that got past layer 1 could still neither read nor write a file.

A query runs on a worker thread with `--timeout` and `--max-memory`; Ctrl-C and the timeout call
DuckDB's interrupt, which stops the query within a fraction of a second.

    rlvr sql runs/demo "SELECT iteration, avg(reward) FROM scores GROUP BY 1 ORDER BY 1"

Tests: tests/test_sql_readonly.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from rlvr.run import open_run
from rlvr.schema import EVALUATE, ITERATION_STAGES, PREPARE, RESCORE_PREFIX, STAGE_TABLE, TABLES, UPDATE, RunPaths
from rlvr.sqlguard import QueryError, check_query
from rlvr.store import CorruptRecordError, read_record, redo_spec, verified_record

__all__ = ["QueryError", "check_query", "connect_run", "run_sql", "status_rows"]
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_MEMORY = "4GB"

# ---- layer 2: a connection that cannot touch a file ---------------------------------------------


def committed_files(paths: RunPaths) -> dict[str, list[Path]]:
    """Parquet files listed by commit records, per table, in iteration order; each record's files
    are checked against their sha256 (rlvr.store.IntegrityError names any that do not match)."""
    files: dict[str, list[Path]] = {t: [] for t in TABLES}
    if rec := verified_record(paths, PREPARE, None):
        files["problems"] += rec.parquet_files(paths.root)
    for it_dir in sorted(paths.stages.glob("iteration=*")):
        i = int(it_dir.name.split("=")[1])
        for stage in (*ITERATION_STAGES, EVALUATE):
            if rec := verified_record(paths, stage, i):
                files[STAGE_TABLE[stage]] += rec.parquet_files(paths.root)
    rescored = sorted(paths.stages.glob(f"iteration=*/{RESCORE_PREFIX}*.json"), key=lambda p: (p.name, p.parent.name))
    files["scorings"] = list(files["scores"])
    for p in rescored:  # rescore.<name> records, checked like every other
        if rec := verified_record(paths, p.stem, int(p.parent.name.split("=")[1])):
            files["scorings"] += rec.parquet_files(paths.root)
    return files


# reward plug-in components one row each: (iteration, prompt_id, sample_idx, scoring, name, weight, score, reward, reason)
COMPONENTS_VIEW = """
CREATE VIEW reward_components AS
SELECT iteration, prompt_id, sample_idx, scoring, c.name, c.weight, c.score, c.reward, c.reason
FROM (SELECT iteration, prompt_id, sample_idx, scoring, unnest(components) AS c FROM scorings)
"""


def connect_run(run_dir: str | Path, *, max_memory: str = DEFAULT_MAX_MEMORY) -> duckdb.DuckDBPyConnection:
    run = open_run(run_dir)
    con = duckdb.connect(":memory:")
    for table, paths in committed_files(run.paths).items():
        schema = TABLES[table]
        # scorings: shards from before a column was added read as nulls in it (the dataset's schema wins)
        source = ds.dataset([str(p) for p in paths], format="parquet", schema=schema) if paths else schema.empty_table()
        con.register(table, source)
    con.execute(COMPONENTS_VIEW)  # a view over a view: no file is opened by DuckDB
    try:
        con.execute("SET memory_limit = $m", {"m": max_memory})
    except duckdb.Error as err:
        raise QueryError(f"--max-memory {max_memory!r}: {str(err).splitlines()[0]} (e.g. 500MB, 4GB)") from None
    con.execute("SET temp_directory = ''")  # no spilling: nothing written under ./.tmp
    con.execute("SET enable_external_access = false")
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")
    return con


def run_sql(
    run_dir: str | Path, query: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_memory: str = DEFAULT_MAX_MEMORY
) -> pa.Table:
    """Execute one read-only query over the run's views; stop it after timeout_s seconds."""
    check_query(query)
    return _execute(connect_run(run_dir, max_memory=max_memory), query, timeout_s)


def _stop(con: duckdb.DuckDBPyConnection, worker: threading.Thread, patience_s: float = 10.0) -> None:
    """Interrupt until the query has ended: an interrupt that lands before DuckDB has started the
    query is lost, so one call is not enough."""
    deadline = time.monotonic() + patience_s
    while worker.is_alive() and time.monotonic() < deadline:
        try:
            con.interrupt()
        except duckdb.Error:  # the worker finished and closed it meanwhile
            break
        worker.join(timeout=0.1)


def _execute(con: duckdb.DuckDBPyConnection, query: str, timeout_s: float) -> pa.Table:
    """Run the query on a worker thread, so the main thread stays free to interrupt it on timeout
    or Ctrl-C (a KeyboardInterrupt only reaches Python code, never a query inside DuckDB)."""
    box: dict = {}

    def work() -> None:
        try:
            box["table"] = con.sql(query).to_arrow_table()
        except BaseException as exc:
            box["error"] = exc
        finally:
            con.close()

    worker = threading.Thread(target=work, name="rlvr-sql", daemon=True)
    deadline = time.monotonic() + timeout_s
    worker.start()
    try:
        while worker.is_alive() and time.monotonic() < deadline:
            worker.join(timeout=min(0.05, max(deadline - time.monotonic(), 0)))
    except KeyboardInterrupt:
        _stop(con, worker)
        raise
    if worker.is_alive():
        _stop(con, worker)
        raise QueryError(
            f"query stopped after --timeout {timeout_s:g}s; raise --timeout, or narrow it (WHERE iteration = ..., LIMIT)"
        )
    if "error" in box:
        err = box["error"]
        if not isinstance(err, duckdb.Error):
            raise err
        raise QueryError(
            f'{err}\n(views: {", ".join(TABLES)}, reward_components; `rlvr sql DIR "DESCRIBE scores"` lists columns)'
        ) from None
    return box["table"]


# ---- status -------------------------------------------------------------------------------------


def status_rows(run_dir: str | Path) -> list[dict]:
    """One row per (iteration, stage) up to the run's target: committed or not, rows, seconds;
    `weights` of the rows that commit a policy (prepare: v0, update(i): v_{i+1}): whether its
    weights are still on disk or checkpoint retention pruned them. A corrupt commit record shows as
    not committed, with a note saying so (no file is hashed here: `rlvr verify-store` does that)."""
    from rlvr.retention import has_weights

    run = open_run(run_dir)
    rows = []
    for stage, i in run.config.stage_plan():
        try:
            rec = read_record(run.paths.record(stage, i))
        except CorruptRecordError:
            rows.append(
                {**_row(i, stage, None), "note": f"corrupt commit record: rlvr resume {run_dir} --redo {redo_spec(stage, i)}"}
            )
            continue
        rows.append(row := _row(i, stage, rec))
        if stage in (PREPARE, UPDATE) and rec is not None:
            v = 0 if i is None else i + 1
            row["weights"] = f"v{v}" if has_weights(run.paths, v) else f"v{v} pruned"
    return rows


def started_rows(rows: list[dict]) -> list[dict]:
    """status_rows without the iterations that have nothing committed (planned, not begun): what
    `rlvr status --format json` reports. prepare's row (iteration "", not an iteration) stays."""
    begun = {r["iteration"] for r in rows if r["committed"]}
    return [r for r in rows if r["iteration"] == "" or r["iteration"] in begun]


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
        return (
            f"{x.get('engine', '')} ({start}), {x.get('tokens', 0)} tokens in {x.get('generation_seconds', 0):.2f}s, "
            f"{x.get('tokens_per_s', 0):.0f} tok/s"
        )
    if stage == "verify":
        return f"{x.get('correct', 0)} correct, reward mean {x.get('reward_mean', 0):.3f}"
    if stage == EVALUATE:
        k = x.get("samples", 1)
        return f"v{rec.iteration} on {x.get('problems', 0)} held-out: accuracy {x.get('accuracy', 0):.3f}" + (
            f", pass@{k} {x.get(f'pass_at_{k}', 0):.3f}" if k > 1 else ""
        )
    if stage == "update":
        return f"-> v{x.get('policy_version')}, {x.get('groups_used', 0)} groups used, {x.get('groups_dropped', 0)} dropped"
    return f"{rec.rows} problems"
