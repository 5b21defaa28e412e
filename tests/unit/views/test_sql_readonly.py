"""`rlvr sql` is read-only by construction: hostile statements are refused fast, with a message
that names them, and neither the run folder nor the working directory changes by a byte; the
connection itself cannot open a file even when the classifier is bypassed; a runaway query stops
at --timeout, and Ctrl-C cancels it."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import pytest

from rlvr.schema import RunPaths
from rlvr.views.sql import QueryError, check_query, connect_run, run_sql
from tests.helpers.rows import RUNAWAY, hostile, sql_store


@pytest.fixture()
def store(tmp_path: Path) -> RunPaths:
    return sql_store(tmp_path)


def _tree_hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_hostile_statements_are_refused_and_change_nothing(store: RunPaths, tmp_path: Path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = _tree_hashes(store.root)
    cases = hostile(store.root)
    assert len(cases) >= 40
    slowest = 0.0
    for sql, phrase in cases:
        t0 = time.perf_counter()
        with pytest.raises(QueryError) as exc:
            run_sql(store.root, sql)
        slowest = max(slowest, time.perf_counter() - t0)
        assert phrase in str(exc.value), (sql, str(exc.value))
    assert slowest < 0.5, f"a refusal took {slowest:.2f}s"
    assert _tree_hashes(store.root) == before
    assert list(cwd.iterdir()) == []  # no ./.tmp, no leak.csv
    # the legitimate queries still run, over the committed shards only
    assert run_sql(store.root, "SELECT count(*) AS n, max(iteration) AS i FROM rollouts").to_pylist() == [{"n": 3000, "i": 0}]
    for ok in [
        "WITH t AS (SELECT iteration FROM rollouts) SELECT count(*) FROM t",
        "DESCRIBE scores",
        "SUMMARIZE problems",
        "SHOW TABLES",
        "VALUES (1), (2)",
        "FROM problems",
        "SELECT sum(x) FROM range(10) t(x)",
        "SELECT r.prompt_id, p.answer FROM rollouts r JOIN problems p USING (prompt_id) LIMIT 1",
    ]:
        run_sql(store.root, ok)
    assert _tree_hashes(store.root) == before and list(cwd.iterdir()) == []


def test_the_connection_cannot_touch_files_even_without_the_classifier(store: RunPaths, tmp_path: Path, monkeypatch) -> None:
    """Layer 2 alone: statements that check_query refuses, sent straight to the connection."""
    monkeypatch.chdir(tmp_path)
    before = _tree_hashes(store.root)
    con = connect_run(store.root)
    r, shard = store.root, store.root / "rollouts/iteration=000000/part-000000.parquet"
    for sql in [
        f"COPY (SELECT 42 AS x) TO '{shard}' (FORMAT parquet, USE_TMP_FILE false)",
        f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{r}/run.toml' (FORMAT csv)",
        "COPY (SELECT 1) TO 'leak.csv'",
        f"SELECT * FROM read_text('{r}/run.toml')",
        f"SELECT * FROM glob('{r}/*')",
        f"SELECT * FROM read_parquet('{r}/rollouts/iteration=000001/part-000000.parquet')",
        f"ATTACH '{r}/x.duckdb'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET temp_directory = '.'",
        "SET disabled_filesystems = ''",
    ]:
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    assert con.execute("SELECT count(*) FROM rollouts").fetchone() == (3000,)  # the views still read
    con.close()
    assert _tree_hashes(store.root) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_classifier_accepts_the_readme_queries() -> None:
    for sql in [
        "SELECT iteration, avg(reward) AS mean_reward, count(*) AS responses FROM scores GROUP BY 1 ORDER BY 1",
        "SELECT r.prompt_id, r.response_text, s.extracted_answer, s.reward, s.advantage, s.reason FROM rollouts r "
        "JOIN scores s USING (iteration, prompt_id, sample_idx) WHERE iteration = 2 LIMIT 10",
        "SELECT iteration AS policy, avg(correct::INT) AS accuracy, count(*) AS responses FROM evals GROUP BY 1 ORDER BY 1",
        "SELECT p.prompt, avg(s.correct::INT) AS acc FROM scores s JOIN problems p USING (prompt_id) GROUP BY 1 ORDER BY 2 DESC",
        "DESCRIBE scores",
    ]:
        check_query(sql)


@pytest.fixture()
def ctrl_c() -> None:
    """Ctrl-C raises KeyboardInterrupt here, whatever started pytest: a shell starts a background job
    (`make test &`, a CI runner's) with SIGINT ignored, and then no Ctrl-C test can see one."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_runaway_query_stops_at_the_timeout(store: RunPaths) -> None:
    t0 = time.perf_counter()
    with pytest.raises(QueryError, match="stopped after --timeout 1s"):
        run_sql(store.root, RUNAWAY, timeout_s=1.0)
    assert time.perf_counter() - t0 < 4.0


def test_ctrl_c_ends_the_query_before_it_returns(store: RunPaths, ctrl_c: None) -> None:
    """Ctrl-C interrupts the query and waits for it: no query thread outlives the KeyboardInterrupt.
    (On Python 3.11 a Ctrl-C inside Thread.join() marks the running thread stopped, so a loop on
    is_alive() sent no interrupt, and the process exited under a running query: SIGABRT in CI.)"""
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        run_sql(store.root, RUNAWAY, timeout_s=600)
    assert time.perf_counter() - t0 < 4.0
    assert not [t for t in threading.enumerate() if t.name == "rlvr-sql"]


def test_the_classifier_names_the_views_of_the_schema() -> None:
    from rlvr.schema import TABLES
    from rlvr.views.guard import VIEWS
    from rlvr.views.sql import COMPONENTS_VIEW

    assert VIEWS == (*TABLES, "reward_components") and "CREATE VIEW reward_components" in COMPONENTS_VIEW


def test_max_memory_bounds_a_query_without_spilling_to_disk(store: RunPaths, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    big = "SELECT count(DISTINCT x::VARCHAR || 'padding') FROM range(20000000) t(x)"  # hundreds of MB of hash table
    with pytest.raises(QueryError, match="(?i)out of memory|memory limit"):
        run_sql(store.root, big, max_memory="32MB")
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no ./.tmp spill folder
    with pytest.raises(QueryError, match="--max-memory 'lots'"):
        run_sql(store.root, "SELECT 1", max_memory="lots")
