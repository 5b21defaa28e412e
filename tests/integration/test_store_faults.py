"""The run store on a flaky S3: faults injected by tests/helpers/faultproxy.py (a real HTTP proxy in its own
process) between s3fs and the S3 test server (moto's server on 127.0.0.1).

A lost reply is the fault that matters most: the store applied the request, the client never heard, and
botocore retries it. A create-only PUT retried that way meets the object its own first attempt made. The
store layer must recognise its own write (the object holds exactly the bytes it sent: a commit record
names a unique attempt and a creation time, a lease body a random holder id), never take it for another
writer's, and never delete what its own record lists.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from rlvr.checks.start import create_or_open
from rlvr.schema import PREPARE, ROLLOUT
from rlvr.store import lease
from rlvr.store.fs import Conflict, object_store
from rlvr.store.integrity import check_store, orphans
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from tests.helpers.run_builder import build_run, commit_stage

DATA = {"run": {"iterations": 2}}
LOSE_NEXT_CONDITIONAL_REPLY = [{"match": "conditional", "fault": "reset_after", "count": 1}]


@pytest.mark.parametrize(("first", "then"), [(b"mine", b"mine"), (b"mine", b"theirs")], ids=["own-write", "other-write"])
def test_a_create_only_put_whose_reply_was_lost_is_the_writers_own(fault_proxy, s3_uri: str, first, then) -> None:
    store = object_store(s3_uri)
    fault_proxy.set(rules=LOSE_NEXT_CONDITIONAL_REPLY)
    got = store.put("k.json", first, create=True)  # applied, reply lost, retried: the retry meets this very object
    assert fault_proxy.counts()["reset_after"] == 1
    assert got.size == len(first) and store.read("k.json") == first
    if then == first:  # the same bytes again: the writer's own object (an idempotent create)
        assert store.put("k.json", then, create=True).etag == got.etag
    else:
        with pytest.raises(Conflict):
            store.put("k.json", then, create=True)
        assert store.read("k.json") == first


def test_a_lost_reply_to_a_commit_record_keeps_the_commit(fault_proxy, s3_uri: str) -> None:
    """The data loss this guards against: the writer took its own record for another writer's and
    deleted the files that record lists."""
    run = build_run(s3_uri, DATA, upto=0)
    fault_proxy.set(rules=LOSE_NEXT_CONDITIONAL_REPLY)
    commit_stage(run, PREPARE, None)
    assert fault_proxy.counts()["reset_after"] == 1  # the one conditional write: the record
    rec = read_record(open_run(s3_uri).paths.record(PREPARE, None))
    assert rec is not None and check_store(s3_uri)[0] == [] and orphans(s3_uri) == []
    assert run_sql(s3_uri, "SELECT count(*) AS n FROM problems").to_pylist() == [{"n": 0}]
    commit_stage(open_run(s3_uri), ROLLOUT, 0)  # the run goes on
    assert check_store(s3_uri)[0] == []


@pytest.mark.parametrize("step", ["take", "renew"])
def test_a_lease_write_whose_reply_was_lost_is_still_held(fault_proxy, s3_uri: str, monkeypatch, step) -> None:
    monkeypatch.setenv(lease.TTL_ENV, "3")
    if step == "take":
        fault_proxy.set(rules=LOSE_NEXT_CONDITIONAL_REPLY)
    with lease.writer_lease(s3_uri) as held:
        if step == "renew":
            fault_proxy.set(rules=LOSE_NEXT_CONDITIONAL_REPLY)
            first = held.etag
            for _ in range(100):  # a renewal every ttl/3 = 1 s; bounded
                if held.etag != first:
                    break
                time.sleep(0.05)
        assert fault_proxy.counts()["reset_after"] == 1
        assert not held.lost
        held.check()
        with pytest.raises(lease.LeaseError, match="another rlvr process"):
            lease.Lease(object_store(s3_uri), 3).take()


@pytest.mark.slow
def test_a_three_iteration_run_on_a_flaky_store_equals_a_clean_local_run(
    fault_proxy, tmp_path, prefect_api: str, small_config, tiny_model, s3_uri: str
) -> None:
    """About 10% of requests fail (throttled, reset before the store saw them, reset after it applied them:
    the reply lost), every one delayed: the run finishes with no resume, identical to a local run."""
    from rlvr.flows.train import train

    from tests.helpers.cli import run_cli

    started = time.perf_counter()
    local = create_or_open(tmp_path / "local", small_config, 3)
    train(str(local.paths.root))
    clean_s = time.perf_counter() - started

    cfg = tmp_path / "small.toml"
    cfg.write_text(small_config.to_toml())
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}
    started = time.perf_counter()  # the same run on the same store with no faults: what the faults cost is the difference
    assert run_cli("train", str(cfg), "--run", f"{s3_uri}-clean", "--iterations", "3", env=env).returncode == 0
    clean_s3_s = time.perf_counter() - started
    fault_proxy.set(slowdown=0.04, reset_before=0.03, reset_after=0.03, latency_ms=2, rules=LOSE_NEXT_CONDITIONAL_REPLY)
    started = time.perf_counter()
    done = run_cli("train", str(cfg), "--run", s3_uri, "--iterations", "3", env=env)
    flaky_s = time.perf_counter() - started
    counts = fault_proxy.counts()
    assert done.returncode == 0, done.stderr[-3000:]
    injected = sum(counts[f] for f in ("slowdown", "reset_before", "reset_after"))
    assert injected >= 0.05 * counts["requests"] and counts["reset_after"] >= 1, counts
    fault_proxy.set()  # the checks below read through the proxy too: no faults for them

    plan = local.config.stage_plan()
    mine = {k: read_record(open_run(s3_uri).paths.record(*k)) for k in plan}
    ref = {k: read_record(local.paths.record(*k)) for k in plan}
    for k in plan:
        ours = [(o.path, o.sha256) for o in mine[k].outputs]
        theirs = [(o.path, o.sha256) for o in ref[k].outputs]
        if k[0] == "update":  # its metrics shard holds wall-clock columns; the policy files must match
            ours, theirs = (
                [x for x in ours if not x[0].startswith("updates/")],
                [x for x in theirs if not x[0].startswith("updates/")],
            )
        assert ours == theirs, k
    q = "SELECT * FROM scores ORDER BY ALL"
    assert run_sql(s3_uri, q).to_pylist() == run_sql(str(local.paths.root), q).to_pylist()
    assert check_store(s3_uri)[0] == [] and orphans(s3_uri) == []
    print(
        json.dumps(
            {
                **counts,
                "injected": injected,
                "local_s": round(clean_s, 1),
                "clean_s3_s": round(clean_s3_s, 1),
                "flaky_s3_s": round(flaky_s, 1),
            }
        )
    )


def _said(done) -> str:
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


@pytest.mark.parametrize(
    ("where", "phrase"),
    [
        ("denied", "access denied by http://127.0.0.1:"),
        ("no-bucket", "there is no bucket 'rlvr-no-such-bucket' at http://127.0.0.1:"),
        ("no-endpoint", "http://127.0.0.1:9 did not answer"),
    ],
)
def test_a_permanent_store_error_stops_the_run_at_once_with_one_line(
    fault_proxy, tmp_path, monkeypatch, s3_uri: str, where: str, phrase: str
) -> None:
    from tests.helpers.cli import run_cli

    uri = "s3://rlvr-no-such-bucket/runs/x" if where == "no-bucket" else s3_uri
    if where == "denied":
        fault_proxy.set(deny=1.0)
    if where == "no-endpoint":
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    started = time.perf_counter()
    done = run_cli("train", "--run", uri, "--iterations", "1", env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2, done.stderr[-2000:]
    line = _said(done)
    assert phrase in line and ("AWS_" in line or "create it" in line), done.stderr[-2000:]  # names the fix
    assert time.perf_counter() - started < 120
    fault_proxy.set()
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    if where != "no-bucket":
        assert object_store(s3_uri).list() == {}  # nothing written, nothing half-committed


def test_access_denied_at_the_commit_point_commits_nothing_and_a_rerun_commits(fault_proxy, s3_uri: str) -> None:
    from rlvr.store.fs import ObjectStoreError

    run = build_run(s3_uri, DATA, upto=1)
    fault_proxy.set(rules=[{"match": "conditional", "fault": "deny", "count": 1}])
    with pytest.raises(ObjectStoreError, match="access denied"):
        commit_stage(run, ROLLOUT, 0)
    fault_proxy.set()
    assert read_record(open_run(s3_uri).paths.record(ROLLOUT, 0)) is None
    assert check_store(s3_uri)[0] == []
    commit_stage(open_run(s3_uri), ROLLOUT, 0)
    assert check_store(s3_uri)[0] == [] and orphans(s3_uri) == []  # the denied attempt's uploads were swept
