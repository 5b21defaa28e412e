"""Rows and statements several store and view tests share: a rollouts row (ROW, committed by
write_rollout), a problems row (PROBLEM), a run of 3000 rollouts for `rlvr sql` (sql_store), the
hostile SQL statements it must refuse (hostile) and a query that runs away (RUNAWAY), and run text a
page must escape (HOSTILE_HTML)."""

from __future__ import annotations

from pathlib import Path

from rlvr.checks.start import create_or_open
from rlvr.schema import PREPARE, PROBLEMS, ROLLOUT, ROLLOUTS, RunPaths, shard_name
from rlvr.store.commit import begin_stage, write_table

ROW = {
    "iteration": 3,
    "prompt_id": "p1",
    "sample_idx": 0,
    "prompt_token_ids": [1, 2, 3],
    "response_token_ids": [4, 5],
    "response_logprobs": [-0.5, -1.25],
    "response_text": "<answer>4</answer>",
    "num_response_tokens": 2,
    "finish_reason": "stop",
    "policy_version": 3,
    "staleness": 0,
    "engine": "transformers",
    "temperature": 1.0,
    "seed": 2**62 + 1,
    "model": None,
}
# text from a run that a page must escape: a script, a closed cell and an image
HOSTILE_HTML = '<script>document.title = "pwned"</script></td><img id="pwned" src="x">'

PROBLEM = {
    "prompt_id": "p1",
    "task": "arithmetic",
    "split": "train",
    "prompt": "1+1?",
    "answer": "2",
    "tests": None,
    "sources": None,
    "meta": "{}",
}


def hostile(root: Path) -> list[tuple[str, str]]:
    """(statement, a phrase its refusal must contain): 48 attempts to write, read or reconfigure."""
    r = str(root)
    shard = f"{r}/rollouts/iteration=000000/part-000000.parquet"
    return [
        (f"COPY (SELECT 1 AS x) TO '{shard}' (FORMAT parquet)", "COPY is refused"),
        (f"COPY (SELECT 1 AS x) TO '{shard}' (FORMAT parquet, USE_TMP_FILE false)", "COPY is refused"),
        (f"COPY (SELECT * FROM scores) TO '{r}/run.toml' (FORMAT csv)", "COPY is refused"),
        (f"COPY (SELECT 1) TO '{r}/_stages/prepare.json'", "COPY is refused"),
        ("COPY (SELECT 1) TO 'leak.csv'", "COPY is refused"),
        (f"COPY rollouts FROM '{shard}'", "COPY is refused"),
        (f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{shard}'", "EXPLAIN ANALYZE COPY is refused"),
        (f"EXPLAIN ANALYZE COPY (SELECT 42) TO '{r}/run.toml' (FORMAT csv)", "EXPLAIN ANALYZE COPY is refused"),
        ("EXPLAIN DROP VIEW scores", "EXPLAIN DROP is refused"),
        ("EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "EXPLAIN ANALYZE CREATE is refused"),
        ("EXPLAIN SELECT 1", "EXPLAIN SELECT is refused"),
        (f"EXPORT DATABASE '{r}/export'", "EXPORT is refused"),
        (f"IMPORT DATABASE '{r}'", "IMPORT is refused"),
        (f"ATTACH '{r}/x.duckdb' AS x", "ATTACH is refused"),
        (f"ATTACH '{shard}' AS y (READ_ONLY)", "ATTACH is refused"),
        ("DETACH memory", "DETACH is refused"),
        ("USE memory", "USE is refused"),
        ("CREATE TABLE t AS SELECT * FROM rollouts", "CREATE is refused"),
        ("CREATE OR REPLACE VIEW scores AS SELECT 1 AS reward", "CREATE is refused"),
        ("CREATE MACRO m(x) AS x + 1", "CREATE is refused"),
        ("CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", "CREATE is refused"),
        ("INSERT INTO rollouts SELECT * FROM rollouts", "INSERT is refused"),
        ("UPDATE scores SET reward = 1", "UPDATE is refused"),
        ("DELETE FROM scores", "DELETE is refused"),
        ("DROP VIEW scores", "DROP is refused"),
        ("ALTER VIEW scores RENAME TO s2", "ALTER is refused"),
        ("INSTALL httpfs", "INSTALL is refused"),
        ("FORCE INSTALL httpfs", "FORCE INSTALL is refused"),
        ("LOAD httpfs", "LOAD is refused"),
        ("SET enable_external_access = true", "SET is refused"),
        ("SET temp_directory = '.'", "SET is refused"),
        ("RESET lock_configuration", "RESET is refused"),
        ("PRAGMA enable_profiling = 'json'", "PRAGMA is refused"),
        ("PRAGMA database_list", "PRAGMA is refused"),
        ("CALL pragma_version()", "CALL is refused"),
        ("CHECKPOINT", "CHECKPOINT is refused"),
        ("VACUUM", "VACUUM is refused"),
        ("BEGIN TRANSACTION", "BEGIN is refused"),
        ("PREPARE q AS SELECT 1", "PREPARE is refused"),
        ("SELECT 1; SELECT 2", "got 2 statements"),
        (f"SELECT 1; COPY (SELECT 1) TO '{shard}'", "got 2 statements (SELECT, COPY)"),
        (f"SELECT * FROM read_text('{r}/run.toml')", "read_text() is refused"),
        (f"SELECT * FROM read_blob('{r}/_stages/prepare.json')", "read_blob() is refused"),
        (f"SELECT * FROM read_parquet('{r}/rollouts/*/*.parquet')", "read_parquet() is refused"),
        (f"SELECT * FROM parquet_scan('{r}/rollouts/iteration=000001/part-000000.parquet')", "parquet_scan() is refused"),
        (f"SELECT count(*) FROM '{r}/rollouts/*/*.parquet'", "reads a file and is refused"),
        (f"SELECT * FROM read_csv('{r}/notes.txt')", "read_csv() is refused"),
        ("SELECT * FROM read_csv_auto('/etc/passwd')", "read_csv_auto() is refused"),
        (f"SELECT * FROM glob('{r}/**')", "glob() is refused"),
        (f"SELECT * FROM parquet_metadata('{shard}')", "parquet_metadata() is refused"),
        ("SELECT * FROM duckdb_settings()", "duckdb_settings() is refused"),
        ("SELECT * FROM duckdb_extensions()", "duckdb_extensions() is refused"),
        (f"SELECT * FROM query('SELECT * FROM read_text(''{r}/run.toml'')')", "query() is refused"),
        (f"SELECT * FROM query_table('{shard}')", "query_table() is refused"),
        (f"WITH t AS (SELECT * FROM read_text('{r}/notes.txt')) SELECT * FROM t", "read_text() is refused"),
        (f"SELECT * FROM scores WHERE prompt_id IN (SELECT content FROM read_text('{r}/notes.txt'))", "read_text() is refused"),
        (f"SUMMARIZE SELECT * FROM read_text('{r}/run.toml')", "read_text() is refused"),
        (f"DESCRIBE '{r}/notes.txt'", "reads a file and is refused"),
        ("SELECT current_setting('temp_directory')", "current_setting() is refused"),
        ("PIVOT scores ON task USING count(*)", "PIVOT is refused"),
        ("SELEC 1", "SQL does not parse"),
    ]


def write_rollout(paths: RunPaths, inputs: dict) -> None:
    """Commit ROW as iteration 3's rollout stage with these inputs."""
    with begin_stage(paths, ROLLOUT, 3, inputs) as tx:
        out = tx.output(paths.table_dir("rollouts", 3))
        write_table([ROW], ROLLOUTS, out / shard_name(0))
        tx.commit(rows=1)


def sql_store(tmp_path: Path) -> RunPaths:
    """A run with committed problems and 3000 rollouts, an uncommitted shard and a stray text file."""
    paths = create_or_open(tmp_path / "run", None, None).paths
    with begin_stage(paths, PREPARE, None, {"a": 1}) as tx:
        write_table([PROBLEM], PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
        tx.commit(rows=1)
    with begin_stage(paths, ROLLOUT, 0, {"a": 1}) as tx:
        rows = [{**ROW, "iteration": 0, "sample_idx": k, "seed": k} for k in range(3000)]
        write_table(rows, ROLLOUTS, tx.output(paths.table_dir("rollouts", 0)) / shard_name(0))
        tx.commit(rows=3000)
    stray = paths.table_dir("rollouts", 1)  # written, never committed: no reader may see it
    stray.mkdir(parents=True)
    write_table([{**ROW, "iteration": 1}], ROLLOUTS, stray / shard_name(0))
    (paths.root / "notes.txt").write_text("uncommitted text\n")
    return paths


RUNAWAY = "SELECT max(a.seed + b.seed + c.seed + d.seed) FROM rollouts a, rollouts b, rollouts c, rollouts d"  # 8e13 rows
