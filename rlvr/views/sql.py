"""Read-only SQL over a run (`rlvr sql`; the status table is rlvr.views.status).

`connect_run(dir)` returns a DuckDB connection with one view per table in rlvr.schema.TABLES
 (problems, rollouts, scores, updates, evals, scorings) over exactly the files that commit records
list, each checked against its recorded sha256, so a half-written, uncommitted or altered shard is
never visible. `scores` is the run's own scoring; `scorings` adds every `rlvr rescore` name's rows
(column `scoring`), and `reward_components` shows the reward plug-ins' components of every scoring,
one row each. Tables with no committed file yet are empty views with the right columns. An `rlvr
eval --out` folder gets its own views (rlvr.schema.EVAL_FOLDER_TABLES: problems, responses, summary,
pass_at_k) over the files its eval.json lists, checked the same way.

Read-only by construction, in two layers:
1. `check_query` (rlvr/views/guard.py) accepts one plain SELECT / WITH / VALUES / DESCRIBE /
   SUMMARIZE / SHOW, judged by DuckDB's own parser, and refuses every other statement (EXPLAIN
   ANALYZE included), file-reading or catalogue table functions and FROM 'file' scans.
2. The connection itself cannot touch a file: the views are pyarrow datasets over the committed
   files (pyarrow, not DuckDB, opens them), DuckDB's local file system is disabled, spilling to
   disk is off (no `.tmp/` in the working directory), and the configuration is locked. A statement
   that got past layer 1 could still neither read nor write a file.

A query runs on a worker thread with `--timeout` and `--max-memory`; Ctrl-C and the timeout call
DuckDB's interrupt, which stops the query within a fraction of a second.

    rlvr sql runs/demo "SELECT iteration, avg(reward) FROM scores GROUP BY 1 ORDER BY 1"

Tests: tests/unit/views/test_sql_readonly.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from rlvr.schema import (
    EVAL_FOLDER_TABLES,
    EVAL_RECORD,
    EVALUATE,
    ITERATION_GLOB,
    ITERATION_STAGES,
    PREPARE,
    RESCORE_PREFIX,
    STAGE_TABLE,
    TABLES,
    RunPaths,
    eval_table_path,
    iteration_of,
)
from rlvr.store.folders import verified_folder_record
from rlvr.store.records import verified_record
from rlvr.store.run import open_run
from rlvr.views.guard import QueryError, check_query

__all__ = ["QueryError", "check_query", "connect_run", "run_sql"]
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_MEMORY = "4GB"

# ---- layer 2: a connection that cannot touch a file ---------------------------------------------


def committed_files(paths: RunPaths) -> dict[str, list[Path]]:
    """Parquet files listed by commit records, per table, in iteration order; each record's files
    are checked against their sha256 (rlvr.store.commit.IntegrityError names any that do not match)."""
    files: dict[str, list[Path]] = {t: [] for t in TABLES}
    if rec := verified_record(paths, PREPARE, None):
        files["problems"] += rec.parquet_files(paths.root)
    for it_dir in sorted(paths.stages.glob(ITERATION_GLOB)):
        i = iteration_of(it_dir)
        for stage in (*ITERATION_STAGES, EVALUATE):
            if rec := verified_record(paths, stage, i):
                files[STAGE_TABLE[stage]] += rec.parquet_files(paths.root)
    rescored = sorted(paths.stages.glob(f"{ITERATION_GLOB}/{RESCORE_PREFIX}*.json"), key=lambda p: (p.name, p.parent.name))
    files["scorings"] = list(files["scores"])
    for p in rescored:  # rescore.<name> records, checked like every other
        if rec := verified_record(paths, p.stem, iteration_of(p.parent)):
            files["scorings"] += rec.parquet_files(paths.root)
    return files


# reward plug-in components one row each: (iteration, prompt_id, sample_idx, scoring, name, weight, score, reward, reason)
COMPONENTS_VIEW = """
CREATE VIEW reward_components AS
SELECT iteration, prompt_id, sample_idx, scoring, c.name, c.weight, c.score, c.reward, c.reason
FROM (SELECT iteration, prompt_id, sample_idx, scoring, unnest(components) AS c FROM scorings)
"""


def eval_folder_files(root: Path) -> dict[str, list[Path]]:
    """An `rlvr eval` folder's tables (rlvr.schema.EVAL_FOLDER_TABLES): the files its eval.json lists,
    each checked against its sha256."""
    rec = verified_folder_record(root, EVAL_RECORD, redo="write it again with `rlvr eval ... --out` into a new folder")
    listed = {o.path for o in rec.outputs}
    return {t: [p] if (p := eval_table_path(root, t)).name in listed else [] for t in EVAL_FOLDER_TABLES}


def is_eval_folder(folder: str | Path) -> bool:
    """An `rlvr eval --out` folder (eval.json, no run.toml) rather than a run."""
    return (Path(folder) / EVAL_RECORD).is_file() and not RunPaths(Path(folder)).config.is_file()


def connect_run(run_dir: str | Path, *, max_memory: str = DEFAULT_MAX_MEMORY) -> duckdb.DuckDBPyConnection:
    """A locked-down connection with a view per table: a run's (TABLES, reward_components), or an
    `rlvr eval` folder's (EVAL_FOLDER_TABLES)."""
    con = duckdb.connect(":memory:")
    if is_eval_folder(run_dir):
        _register(con, eval_folder_files(Path(run_dir).resolve()), EVAL_FOLDER_TABLES)
    else:
        _register(con, committed_files(open_run(run_dir).paths), TABLES)
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


def _register(con: duckdb.DuckDBPyConnection, files: dict[str, list[Path]], schemas: dict[str, pa.Schema]) -> None:
    """One view per table over a pyarrow dataset of its files (pyarrow opens them, DuckDB never does)."""
    for table, paths in files.items():
        schema = schemas[table]
        # scorings: shards from before a column was added read as nulls in it (the dataset's schema wins)
        source = ds.dataset([str(p) for p in paths], format="parquet", schema=schema) if paths else schema.empty_table()
        con.register(table, source)


def run_sql(
    run_dir: str | Path, query: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_memory: str = DEFAULT_MAX_MEMORY
) -> pa.Table:
    """Execute one read-only query over the run's views; stop it after timeout_s seconds."""
    check_query(query)
    if is_eval_folder(run_dir):
        hint = f'views: {", ".join(EVAL_FOLDER_TABLES)}; `rlvr sql DIR "DESCRIBE responses"` lists columns'
    else:
        hint = f'views: {", ".join(TABLES)}, reward_components; `rlvr sql DIR "DESCRIBE scores"` lists columns'
    return _execute(connect_run(run_dir, max_memory=max_memory), query, timeout_s, hint=hint)


def _stop(con: duckdb.DuckDBPyConnection, done: threading.Event, patience_s: float = 10.0) -> None:
    """Interrupt until the query has ended: an interrupt that lands before DuckDB has started the
    query is lost, so one call is not enough."""
    deadline = time.monotonic() + patience_s
    while not done.is_set() and time.monotonic() < deadline:
        con.interrupt()
        done.wait(timeout=0.1)


def _close(con: duckdb.DuckDBPyConnection, done: threading.Event) -> None:
    """Close the connection once its query has ended (only this, the main, thread touches it then:
    an interrupt racing the worker's own close aborted the process). One still running past
    `_stop`'s patience is left to the process's exit rather than freed under it."""
    if done.is_set():
        con.close()


def _execute(con: duckdb.DuckDBPyConnection, query: str, timeout_s: float, *, hint: str) -> pa.Table:
    """Run the query on a worker thread, so the main thread stays free to interrupt it on timeout
    or Ctrl-C (a KeyboardInterrupt only reaches Python code, never a query inside DuckDB).

    The worker's end is an Event, not `Thread.is_alive()`: on Python 3.11 a KeyboardInterrupt that
    lands inside `Thread.join()` marks a still-running thread as stopped (bpo-45274's fix), and the
    process then exited under a running query (SIGABRT)."""
    box: dict = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["table"] = con.sql(query).to_arrow_table()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="rlvr-sql", daemon=True)
    worker.start()
    deadline = time.monotonic() + timeout_s
    try:  # short waits: a Ctrl-C the OS hands to one of DuckDB's threads runs its handler only when this thread wakes
        while not (finished := done.wait(timeout=min(0.05, max(deadline - time.monotonic(), 0)))):
            if time.monotonic() >= deadline:
                break
    except KeyboardInterrupt:
        _stop(con, done)
        _close(con, done)
        raise
    if not finished:
        _stop(con, done)
    _close(con, done)
    if not finished:
        raise QueryError(
            f"query stopped after --timeout {timeout_s:g}s; raise --timeout, or narrow it (WHERE iteration = ..., LIMIT)"
        )
    if "error" in box:
        err = box["error"]
        if not isinstance(err, duckdb.Error):
            raise err
        raise QueryError(f"{err}\n({hint})") from None
    return box["table"]


# ---- status -------------------------------------------------------------------------------------
