"""The tiny model trained on an s3:// run served by moto on 127.0.0.1, through the `rlvr` CLI in
subprocesses: killed during an upload and during a commit, resumed, it equals a local run of the
same seed byte for byte; a second trainer is refused; no credential reaches an object or a log."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import s3fs

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.models.registry import cache_root
from rlvr.schema import UPDATES
from rlvr.store.commit import FAULT_ENV
from rlvr.store.integrity import check_store, orphans
from rlvr.store.locks import writer_lock
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from tests.conftest import S3_SECRET
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow


def _outputs(location: str, plan: list[tuple]) -> dict[tuple, list[tuple[str, str]]]:
    paths = open_run(location).paths
    return {k: [(o.path, o.sha256) for o in read_record(paths.record(*k)).outputs] for k in plan}


def test_tiny_model_on_s3_resumes_after_kills_and_equals_a_local_run(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path, s3_uri: str
) -> None:
    from rlvr.flows.train import train

    local = create_or_open(tmp_path / "local", small_config, 2)
    train(str(local.paths.root))

    cfg = tmp_path / "small.toml"
    cfg.write_text(small_config.to_toml())
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}
    said = []
    killed = run_cli("train", str(cfg), "--run", s3_uri, "--iterations", "2", env={**env, FAULT_ENV: "update:1:mid_upload"})
    assert killed.returncode == -9, killed.stderr[-3000:]  # SIGKILLed after the first file of v2 was uploaded
    said += [killed.stdout, killed.stderr]
    assert read_record(open_run(s3_uri).paths.record("update", 1)) is None
    left = orphans(s3_uri)
    assert left and all(k.startswith(("policy/v000002@", "updates/iteration=000001@")) for k in left), left
    listed = run_cli("verify-store", s3_uri, env=env)
    assert listed.returncode == 0 and f"{len(left)} object(s) that no commit record lists" in listed.stdout, listed.stdout
    killed = run_cli("resume", s3_uri, env={**env, FAULT_ENV: "update:1:before_record"})  # every file up, no record yet
    assert killed.returncode == -9, killed.stderr[-3000:]
    resumed = run_cli("resume", s3_uri, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    said += [killed.stdout, killed.stderr, resumed.stdout, resumed.stderr, listed.stdout]

    plan = local.config.stage_plan()
    mine, ref = _outputs(s3_uri, plan), _outputs(str(local.paths.root), plan)
    assert [[p for p, _ in mine[k]] for k in plan] == [[p for p, _ in ref[k]] for k in plan]
    differ = sorted(p for k in plan for (p, a), (_, b) in zip(mine[k], ref[k], strict=True) if a != b)
    assert differ == [f"updates/iteration={i:06d}/part-000000.parquet" for i in range(2)], differ  # wall-clock columns
    cols = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))
    for q in (f"SELECT {cols} FROM updates ORDER BY global_step", "SELECT * FROM scores ORDER BY ALL"):
        assert run_sql(s3_uri, q).to_pylist() == run_sql(str(local.paths.root), q).to_pylist()
    assert orphans(s3_uri) == [], "the resumed stage swept its killed attempts' uploads"
    assert check_store(s3_uri)[0] == []
    status = json.loads(run_cli("status", s3_uri, "--format", "json", env=env).stdout)
    assert len(status) == 7 and all(r["committed"] for r in status)

    with writer_lock(s3_uri):  # a trainer holds the run: a second one is refused before it starts a stage
        second = run_cli("train", "--run", s3_uri, "--iterations", "3", env=env)
    assert second.returncode == 2 and f"another rlvr process (pid {os.getpid()} on" in second.stderr, second.stderr
    said += [second.stdout, second.stderr]

    bucket = s3fs.S3FileSystem(skip_instance_cache=True)
    for key in bucket.find(s3_uri.removeprefix("s3://")):
        assert S3_SECRET.encode() not in bucket.cat_file(key), key
    logs = cache_root() / "logs"
    for text in [*said, *(p.read_text() for p in logs.glob("*.log"))] if logs.is_dir() else said:
        assert S3_SECRET not in text
