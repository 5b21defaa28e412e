"""Run store: schema round trip, atomic visibility, commit records, skip on resume
(a kill mid-write: tests/integration/test_store_kill.py)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import PREPARE, ROLLOUT, ROLLOUTS, SCORES, RunPaths, iteration_of, iteration_part, shard_name
from rlvr.store.commit import begin_stage, committed, write_table
from rlvr.store.records import read_record
from rlvr.views.sql import run_sql
from tests.helpers.rows import ROW, write_rollout


def test_iteration_folders_name_and_read_back_their_iteration(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path)
    assert iteration_part(3) == "iteration=000003" and iteration_part(1234567) == "iteration=1234567"
    assert [iteration_of(iteration_part(i)) for i in (0, 3, 1234567)] == [0, 3, 1234567]
    assert iteration_of(paths.record(ROLLOUT, 12).parent) == 12 and iteration_of(tmp_path / "iteration=7") == 7
    assert iteration_of(paths.record(PREPARE, None).parent) is None and iteration_of("v000003") is None


def test_schema_round_trip(tmp_path: Path) -> None:
    f = tmp_path / "r.parquet"
    assert write_table([ROW, {**ROW, "sample_idx": 1}], ROLLOUTS, f) == 2
    t = pq.read_table(f)
    assert t.schema.equals(ROLLOUTS)
    assert t.to_pylist()[0] == ROW
    assert pq.ParquetFile(f).metadata.row_group(0).column(0).compression == "ZSTD"


def test_schema_rejects_missing_columns(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="prompt_id"):
        write_table([{k: v for k, v in ROW.items() if k != "prompt_id"}], ROLLOUTS, tmp_path / "x.parquet")


@pytest.fixture()
def run(tmp_path: Path) -> RunPaths:
    return create_or_open(tmp_path / "run", Config(), None).paths


def test_commit_makes_output_visible_and_records_it(run: RunPaths) -> None:
    write_rollout(run, {"a": 1})
    rec = read_record(run.record(ROLLOUT, 3))
    assert rec is not None and rec.rows == 1 and rec.outputs[0].rows == 1
    assert rec.outputs[0].path == "rollouts/iteration=000003/part-000000.parquet"
    assert committed(run, ROLLOUT, 3, {"a": 1}) == rec
    assert committed(run, ROLLOUT, 3, {"a": 2}) is None  # other inputs: stale, must rerun
    assert run_sql(run.root, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 1}]


def test_exception_mid_stage_leaves_nothing(run: RunPaths) -> None:
    with pytest.raises(ZeroDivisionError):
        with begin_stage(run, ROLLOUT, 3, {"a": 1}) as tx:
            out = tx.output(run.table_dir("rollouts", 3))
            write_table([ROW], ROLLOUTS, out / shard_name(0))
            raise ZeroDivisionError("a bug mid-stage")
    assert not run.table_dir("rollouts", 3).exists()
    assert not run.record(ROLLOUT, 3).exists()
    assert list(run.table_root("rollouts").iterdir()) == []  # no temporary left behind


def test_redo_removes_stale_record_before_touching_outputs(run: RunPaths) -> None:
    write_rollout(run, {"a": 1})
    with pytest.raises(RuntimeError):
        with begin_stage(run, ROLLOUT, 3, {"a": 2}):
            assert not run.record(ROLLOUT, 3).exists()  # gone before any output is replaced
            raise RuntimeError("boom")
    assert run_sql(run.root, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 0}]


def test_run_stage_skips_a_committed_stage_and_reruns_on_new_inputs(run: RunPaths) -> None:
    from rlvr.store.commit import Outcome, run_stage

    calls: list[int] = []

    def body(tx) -> Outcome:
        calls.append(1)
        write_table([ROW], ROLLOUTS, tx.output(run.table_dir("rollouts", 3)) / shard_name(0))
        return Outcome(1, {"note": len(calls)})

    rec, skipped = run_stage(run, ROLLOUT, 3, {"a": 1}, body)
    assert (skipped, rec.rows, rec.extra, len(calls)) == (False, 1, {"note": 1}, 1)
    again, skipped = run_stage(run, ROLLOUT, 3, {"a": 1}, body)
    assert skipped and again == rec and len(calls) == 1  # committed for these inputs: the body never runs
    redo, skipped = run_stage(run, ROLLOUT, 3, {"a": 2}, body)
    assert not skipped and redo.extra == {"note": 2} and redo.fingerprint != rec.fingerprint

    def failing(tx) -> Outcome:
        write_table([ROW], ROLLOUTS, tx.output(run.table_dir("rollouts", 3)) / shard_name(0))
        raise ValueError("bad row 7")

    with pytest.raises(ValueError, match="bad row 7"):
        run_stage(run, ROLLOUT, 3, {"a": 3}, failing)
    assert not run.record(ROLLOUT, 3).exists()  # nothing half-committed is left visible
    assert run_sql(run.root, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 0}]


def test_sql_views_are_read_only_and_typed(run: RunPaths, tmp_path: Path) -> None:
    from rlvr.views.sql import QueryError

    empty = run_sql(run.root, "SELECT * FROM scores")
    assert empty.num_rows == 0 and empty.schema.names == SCORES.names
    for bad in ["CREATE TABLE t AS SELECT 1", f"COPY (SELECT 1) TO '{tmp_path}/x.csv'", "SELECT 1; SELECT 2"]:
        with pytest.raises(QueryError):
            run_sql(run.root, bad)
    with pytest.raises(QueryError):  # no reading outside the run either
        run_sql(run.root, "SELECT * FROM read_csv('/etc/passwd')")
