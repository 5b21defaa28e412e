"""The run store on object storage (rlvr.store.fs, workspace, objects, lease), against a real S3 API:
moto's standalone server on 127.0.0.1 (conftest.s3_endpoint), over HTTP, through s3fs as a user's S3.

No model here: runs are built by tests/helpers/run_builder.py through the real commit protocol. The tiny
model's training on S3 (byte-identical to a local run, SIGKILLs, a second trainer) is
tests/e2e/test_store_s3_e2e.py."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import s3fs

from rlvr.schema import PREPARE, PROBLEMS, ROLLOUT, ROLLOUTS, shard_name
from rlvr.store import fs, lease
from rlvr.store.commit import FAULT_ENV, begin_stage, fetch_policy, write_table
from rlvr.store.fs import Conflict, ObjectStoreError, object_store, split_uri
from rlvr.store.integrity import check_store, orphans, redo, remove_orphans
from rlvr.store.locks import writer_lock
from rlvr.store.records import IntegrityError, read_record
from rlvr.store.retention import prune
from rlvr.store.run import RunError, open_run
from rlvr.store.workspace import object_path
from rlvr.views.sql import connect_run, run_sql
from rlvr.views.status import status_rows
from tests.helpers import ROOT
from tests.helpers.rows import PROBLEM, ROW, hostile
from tests.helpers.run_builder import build_run

DATA = {"run": {"iterations": 2}, "checkpoint": {"keep_last": 1}}


def _bucket(uri: str) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


def _objects(uri: str) -> dict[str, str]:
    """key (relative to the run) -> ETag, as the server lists them now."""
    base = uri.removeprefix("s3://")
    return {k[len(base) + 1 :]: v["ETag"] for k, v in _bucket(uri).find(base, detail=True).items()}


def test_run_uris_hold_no_credentials_and_name_a_prefix() -> None:
    assert split_uri("s3://bucket/runs/x/") == ("s3", "bucket/runs/x")
    for bad, phrase in [
        ("s3://AKIA:secret@bucket/runs/x", "holds no credentials"),
        ("s3://bucket/runs/x?AWS_SECRET_ACCESS_KEY=s", "holds no credentials"),
        ("s3://bucket", "give a bucket and a prefix"),
        ("gs://bucket/runs/x", "gs:// is not supported"),
    ]:
        with pytest.raises(ObjectStoreError, match=phrase) as err:
            split_uri(bad)
        assert "secret" not in str(err.value).lower().replace("aws_secret_access_key", "")
    assert not fs.is_remote("runs/demo") and fs.is_remote("s3://b/x")


def test_conditional_writes_create_only_and_only_if_unchanged(s3_uri: str) -> None:
    store = object_store(s3_uri)
    first = store.put("k.json", b"1", create=True)
    with pytest.raises(Conflict):
        store.put("k.json", b"2", create=True)
    with pytest.raises(Conflict):
        store.put("k.json", b"3", if_match='"0000"')
    second = store.put("k.json", b"4", if_match=first.etag)
    assert store.read("k.json") == b"4" and second.etag != first.etag
    assert store.list() == {"k.json": second}


def test_a_run_on_s3_commits_through_records_and_reads_like_a_local_one(s3_uri: str) -> None:
    run = build_run(s3_uri, DATA)
    assert run.paths.uri == s3_uri and run.paths.location == s3_uri
    keys = _objects(s3_uri)
    rec = read_record(run.paths.record(ROLLOUT, 0))
    (shard,) = rec.outputs
    assert shard.path == "rollouts/iteration=000000/part-000000.parquet"  # the local run's path...
    assert shard.key.startswith("rollouts/iteration=000000@") and keys[shard.key] == shard.etag  # ...at a key of its attempt
    assert "run.toml" in keys and "_stages/prepare.json" in keys
    problems, checked = check_store(s3_uri)
    assert problems == [] and checked == len([o for st, i in run.config.stage_plan() for o in _outputs(run, st, i)])
    assert run_sql(s3_uri, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 0}]
    assert [r["committed"] for r in status_rows(s3_uri)] == [True] * 7
    assert json.loads(_bucket(s3_uri).cat_file(f"{s3_uri[5:]}/_stages/prepare.json"))["stage"] == PREPARE


def _outputs(run, stage, i):
    return read_record(run.paths.record(stage, i)).outputs


RACER = """
import sys, time
from pathlib import Path
from rlvr.schema import ROLLOUT, ROLLOUTS, shard_name
from rlvr.store.commit import begin_stage, write_table
from rlvr.store.records import StoreError
from rlvr.store.run import open_run
from tests.helpers.rows import ROW

uri, n, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
paths = open_run(uri).paths
try:
    with begin_stage(paths, ROLLOUT, 0, {"w": 1}) as tx:
        rows = [{**ROW, "iteration": 0, "sample_idx": k} for k in range(n)]
        write_table(rows, ROLLOUTS, tx.output(paths.table_dir("rollouts", 0)) / shard_name(0))
        print("ready", flush=True)
        while not go.exists():
            time.sleep(0.01)
        tx.commit(rows=n)
    print("committed")
except StoreError as err:
    print(err)
"""


def test_of_two_writers_racing_for_one_stage_exactly_one_commits(s3_uri: str, tmp_path) -> None:
    """Two processes (no lease: stage code called directly) upload their shards, then both create the
    record at once: the create-only write lets exactly one commit, the other's uploads are deleted."""
    build_run(s3_uri, DATA, upto=1)
    go = tmp_path / "go"
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, s3_uri, str(n), str(go)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for n in (1, 2)
    ]
    assert [r.stdout.readline().strip() for r in racers] == ["ready", "ready"]
    go.touch()
    said = [r.communicate(timeout=120)[0].strip() for r in racers]
    assert sorted(s == "committed" for s in said) == [False, True], said
    assert "was committed by another writer first" in next(s for s in said if s != "committed")
    rec = read_record(open_run(s3_uri).paths.record(ROLLOUT, 0))
    assert rec.rows == (1 if said[0] == "committed" else 2)
    assert [k for k in _objects(s3_uri) if k.startswith("rollouts/")] == [rec.outputs[0].key]  # the loser's uploads are gone
    assert run_sql(s3_uri, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": rec.rows}]


def test_a_kill_right_after_the_record_leaves_a_committed_stage(s3_uri: str) -> None:
    """The record is the commit point: a writer killed after creating it, before it tidied its working
    copy or swept earlier attempts, has committed; the next reader sees every file, checked."""
    code = f"""
from rlvr.checks.start import create_or_open
from rlvr.schema import PREPARE, PROBLEMS, shard_name
from rlvr.store.commit import begin_stage, write_table
run = create_or_open({s3_uri!r}, None, None)
paths = run.paths
with begin_stage(paths, PREPARE, None, {{"config": run.config_hash}}) as tx:
    write_table([], PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
    (tx.output(paths.policy_dir(0)) / "config.json").write_text("{{}}")
    tx.commit(rows=0)
"""  # no stage module: they import torch, which a subprocess pays seconds for
    env = {**os.environ, FAULT_ENV: "prepare:None:after_record"}
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=120).returncode == -signal.SIGKILL
    run = open_run(s3_uri)
    assert read_record(run.paths.record(PREPARE, None)) is not None
    assert check_store(s3_uri)[0] == [] and orphans(s3_uri) == []
    assert run_sql(s3_uri, "SELECT count(*) AS n FROM problems").to_pylist() == [{"n": 0}]
    assert (fetch_policy(run.paths, 0) / "config.json").is_file()


def test_readers_see_only_listed_objects_and_orphans_are_reported_then_removed(s3_uri: str, tmp_path) -> None:
    run = build_run(s3_uri, DATA)
    stray = tmp_path / "stray.parquet"
    write_table([{**ROW, "iteration": 0}] * 5, ROLLOUTS, stray)
    bucket, base = _bucket(s3_uri), s3_uri[5:]
    bucket.put_file(str(stray), f"{base}/rollouts/iteration=000000@0123456789ab/part-000000.parquet")  # a killed attempt
    bucket.put_file(str(stray), f"{base}/rollouts/iteration=000000/part-000001.parquet")  # a file no record names
    assert run_sql(s3_uri, "SELECT count(*) AS n FROM rollouts").to_pylist() == [{"n": 0}]
    assert orphans(s3_uri) == [
        "rollouts/iteration=000000/part-000001.parquet",
        "rollouts/iteration=000000@0123456789ab/part-000000.parquet",
    ]
    assert check_store(s3_uri)[0] == []  # orphans are not damage: no record is wrong
    before = _objects(s3_uri)
    assert len(remove_orphans(s3_uri)) == 2
    assert orphans(s3_uri) == [] and set(before) - set(_objects(s3_uri)) == {
        "rollouts/iteration=000000/part-000001.parquet",
        "rollouts/iteration=000000@0123456789ab/part-000000.parquet",
    }
    # a redone stage sweeps the earlier attempts of its folders: its old keys go once the new record commits
    old = read_record(run.paths.record(PREPARE, None)).outputs
    assert redo(s3_uri, "prepare")
    from tests.helpers.run_builder import commit_stage

    commit_stage(open_run(s3_uri), PREPARE, None)
    now = _objects(s3_uri)
    assert not any(o.key in now for o in old) and orphans(s3_uri) == []


def test_a_flipped_byte_in_an_s3_shard_is_detected_on_read(s3_uri: str) -> None:
    run = build_run(s3_uri, DATA)
    (shard,) = _outputs(run, PREPARE, None)[:1]
    run_sql(s3_uri, "SELECT count(*) FROM problems")  # the good bytes are in the cache now
    bucket, key = _bucket(s3_uri), f"{s3_uri[5:]}/{shard.key}"
    data = bytearray(bucket.cat_file(key))
    data[len(data) // 2] ^= 0x01
    bucket.pipe_file(key, bytes(data))
    with pytest.raises(IntegrityError) as err:
        run_sql(s3_uri, "SELECT count(*) FROM problems")
    assert "problems/part-000000.parquet" in str(err.value) and f"rlvr resume {s3_uri} --redo prepare" in str(err.value)
    problems, _ = check_store(s3_uri)
    assert [(p.path, p.redo) for p in problems] == [("problems/part-000000.parquet", "prepare")]


def test_a_damaged_cache_file_is_never_used_and_an_unchanged_file_is_downloaded_once(s3_uri: str) -> None:
    run = build_run(s3_uri, DATA | {"checkpoint": {"keep_last": 0}})
    v0 = {o.sha256: o for o in _outputs(run, PREPARE, None) if o.path.startswith("policy/")}
    for o in [*_outputs(run, PREPARE, None), *_outputs(run, "update", 0)]:  # a fresh machine: nothing cached
        object_path(o.sha256).unlink(missing_ok=True)
    down = fs.TRAFFIC.bytes_down
    fetch_policy(run.paths, 0)
    assert fs.TRAFFIC.bytes_down - down == sum(o.bytes for o in v0.values())
    down = fs.TRAFFIC.bytes_down
    folder = fetch_policy(run.paths, 1)  # v1 shares config, tokenizer and (stand-in) weights with v0
    assert fs.TRAFFIC.bytes_down == down, "an engine's fetch leaves out the trainer state; v0 has the rest"
    folder = fetch_policy(run.paths, 1, trainer_state=True)  # the update's fetch
    state = next(o for o in _outputs(run, "update", 0) if o.path.endswith("trainer_state.pt"))
    assert fs.TRAFFIC.bytes_down - down == state.bytes, "only the file v0 does not have was downloaded"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json", "trainer_state.pt"]
    cached = object_path(state.sha256)
    cached.chmod(0o644)
    cached.write_bytes(b"x" * state.bytes)  # the cache damaged on disk, same size
    os.utime(cached, ns=(1, 1))
    assert hashlib.sha256(cached.read_bytes()).hexdigest() != state.sha256
    open_run(s3_uri)
    fetch_policy(run.paths, 1, trainer_state=True)
    assert hashlib.sha256((folder / "trainer_state.pt").read_bytes()).hexdigest() == state.sha256  # downloaded again


def test_retention_on_s3_deletes_only_unneeded_objects_after_its_prune_record(s3_uri: str) -> None:
    run = build_run(s3_uri, DATA)
    v1 = [o.key for o in _outputs(run, "update", 0) if o.path.startswith("policy/")]
    removed = prune(run)
    keys = _objects(s3_uri)
    assert removed and not any(k in keys for k in v1) and "_stages/pruned/v000001.json" in keys
    assert [r["weights"] for r in status_rows(s3_uri) if r["weights"]] == ["v0", "v1 pruned", "v2"]
    assert check_store(s3_uri)[0] == [] and orphans(s3_uri) == []
    assert prune(open_run(s3_uri)) == []  # idempotent


def test_sql_on_s3_keeps_every_read_only_guarantee(s3_uri: str, tmp_path, monkeypatch) -> None:
    """The hostile statements of test_sql_readonly, aimed at the run's URI and at its working copy:
    refused, and no object under the prefix changes (same keys, same ETags)."""
    paths = open_run(build_run(s3_uri, {"run": {"iterations": 1}}, upto=0).paths.location).paths
    with begin_stage(paths, PREPARE, None, {"a": 1}) as tx:
        write_table([PROBLEM], PROBLEMS, tx.output(paths.table_dir("problems", None)) / shard_name(0))
        tx.commit(rows=1)
    monkeypatch.chdir(tmp_path)
    before = _objects(s3_uri)
    from rlvr.views.guard import QueryError

    for root in (s3_uri, paths.root):
        for sql, phrase in hostile(root):
            with pytest.raises(QueryError) as exc:
                run_sql(s3_uri, sql)
            assert phrase in str(exc.value), (sql, str(exc.value))
    con = connect_run(s3_uri)  # layer 2 alone: the connection has no file system, S3's included
    for sql in [
        f"COPY (SELECT 42 AS x) TO '{s3_uri}/rollouts/iteration=000000/part-000000.parquet' (FORMAT parquet)",
        f"SELECT * FROM read_text('{s3_uri}/run.toml')",
        f"SELECT * FROM read_parquet('{s3_uri}/problems/*.parquet')",
        f"COPY (SELECT 1) TO '{paths.root}/run.toml'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET disabled_filesystems = ''",
    ]:
        with pytest.raises(Exception):  # noqa: B017 -- duckdb.Error of several kinds
            con.execute(sql)
    assert con.execute("SELECT count(*) FROM problems").fetchone() == (1,)
    con.close()
    assert _objects(s3_uri) == before and list(tmp_path.iterdir()) == []


def test_a_second_writer_is_refused_and_a_dead_holder_is_replaced(s3_uri: str) -> None:
    build_run(s3_uri, {"run": {"iterations": 1}}, upto=0)
    with writer_lock(s3_uri):
        with pytest.raises(lease.LeaseError, match=f"another rlvr process \\(pid {os.getpid()} on .*\\) is writing {s3_uri}"):
            with writer_lock(s3_uri):
                pass
    # a holder SIGKILLed on this machine: its pid is gone, the next writer takes the lease at once
    code = f"import os, signal; from rlvr.store.locks import writer_lock\nwith writer_lock({s3_uri!r}): os.kill(os.getpid(), signal.SIGKILL)"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == -signal.SIGKILL
    t0 = time.monotonic()
    with writer_lock(s3_uri):
        assert time.monotonic() - t0 < 10
    # a holder on another machine: live until its lease runs out
    store = object_store(s3_uri)
    other = {"id": "x", "host": "elsewhere", "pid": 1, "boot": "another-boot", "start": "1"}
    store.put(lease.LEASE_KEY, json.dumps({**other, "expires": time.time() + 600, "expires_at": "later"}).encode())
    with pytest.raises(lease.LeaseError, match="pid 1 on elsewhere.*runs out at later"):
        with writer_lock(s3_uri):
            pass
    store.put(lease.LEASE_KEY, json.dumps({**other, "expires": time.time() - 1, "expires_at": "past"}).encode())
    with writer_lock(s3_uri):
        assert json.loads(store.read(lease.LEASE_KEY))["pid"] == os.getpid()


def test_the_lease_is_renewed_and_a_lost_lease_stops_the_commit(s3_uri: str, monkeypatch) -> None:
    run = build_run(s3_uri, {"run": {"iterations": 1}}, upto=0)
    monkeypatch.setenv(lease.TTL_ENV, "0.9")
    store = object_store(s3_uri)
    with writer_lock(s3_uri):
        first = store.head(lease.LEASE_KEY).etag
        time.sleep(1.5)  # longer than the ttl: only renewals keep it
        assert store.head(lease.LEASE_KEY).etag != first
        lease.check_lease(store.uri)
        store.put(lease.LEASE_KEY, b'{"id": "thief", "expires": 0}')  # taken over behind the holder's back
        time.sleep(0.7)
        with pytest.raises(lease.LeaseError, match="lost the writer lease"):
            with begin_stage(run.paths, PREPARE, None, {"a": 1}) as tx:
                write_table([PROBLEM], PROBLEMS, tx.output(run.paths.table_dir("problems", None)) / shard_name(0))
                tx.commit(rows=1)
    assert read_record(open_run(s3_uri).paths.record(PREPARE, None)) is None
    assert not [k for k in _objects(s3_uri) if k.startswith("problems")], "a writer without its lease uploads nothing"


def test_objects_hold_no_credentials(s3_uri: str) -> None:
    build_run(s3_uri, DATA)
    bucket, base = _bucket(s3_uri), s3_uri[5:]
    for key in bucket.find(base):
        data = bucket.cat_file(key)
        assert b"rlvr-test-secret" not in data and b"rlvr-test-key" not in data, key


def test_a_profile_and_its_endpoint_are_honoured_from_the_aws_files(s3_uri: str, tmp_path) -> None:
    """No key in the environment: a named profile in AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE gives
    the keys, the region and the endpoint (botocore's own resolution, as for the AWS CLI)."""
    build_run(s3_uri, {"run": {"iterations": 1}}, upto=1)
    (tmp_path / "config").write_text(
        f"[profile rlvr-test]\nregion = us-east-1\nendpoint_url = {os.environ['AWS_ENDPOINT_URL']}\n"
    )
    (tmp_path / "credentials").write_text(
        f"[rlvr-test]\naws_access_key_id = {os.environ['AWS_ACCESS_KEY_ID']}\n"
        f"aws_secret_access_key = {os.environ['AWS_SECRET_ACCESS_KEY']}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {
        "AWS_PROFILE": "rlvr-test",
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "rlvr.flows.cli", "status", s3_uri, "--format", "json"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert [r["stage"] for r in json.loads(out.stdout) if r["committed"]] == [PREPARE]


def test_an_edited_run_toml_on_s3_is_refused(s3_uri: str) -> None:
    build_run(s3_uri, {"run": {"iterations": 1}}, upto=1)
    store = object_store(s3_uri)
    store.put("run.toml", store.read("run.toml").replace(b"seed = 0", b"seed = 1"))
    with pytest.raises(RunError, match=f"{s3_uri}/run.toml was edited after the run started"):
        open_run(s3_uri)


def test_a_new_working_copy_removes_the_copies_of_gone_processes(tmp_path, monkeypatch) -> None:
    """A process's working copy of s3:// runs is named by its pid; a new one first removes the copies
    of processes that are gone and keeps those of live ones."""
    from rlvr.store import workspace

    monkeypatch.setenv("RLVR_CACHE", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    work = tmp_path / "store" / "work"
    dead, live = work / f"{gone.pid}-0000aaaa", work / f"{os.getpid()}-0000bbbb"
    for folder in (dead, live):
        (folder / "runs").mkdir(parents=True)
    new = workspace._new_work_dir()
    assert not dead.exists() and live.is_dir() and new.is_dir() and new.name.startswith(f"{os.getpid()}-")
