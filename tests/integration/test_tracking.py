"""[tracking] and `rlvr track`: a real tiny run sent to each backend for real, in two sessions (the second
a resumed run: the first session's trackers closed, the state read back from the run folder), then
read back with each backend's own reader: TensorBoard's EventAccumulator, MLflow's client against an
`mlflow server` on 127.0.0.1 (its own venv: scripts/setup-mlflow.sh, `make mlflow`), W&B's protobuf
records in the offline run's .wandb files. Every figure must equal what `rlvr sql` says, and no step
may be written twice.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config, TrackingSection
from rlvr.store.run import open_run
from rlvr.views import trackers
from rlvr.views.sql import run_sql
from rlvr.views.track import close_trackers, sync, target
from rlvr.views.trackers import TrackingError

pytestmark = pytest.mark.slow
MLFLOW_VENV = Path(os.environ.get("RLVR_MLFLOW_VENV", Path.home() / ".cache/rlvr/mlflow-venv"))


@pytest.fixture(scope="module")
def mlflow_uri(tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """`mlflow server` on 127.0.0.1 from the venv scripts/setup-mlflow.sh builds; None when that venv is
    absent here (CI builds it: `make test` depends on `make mlflow`, and under CI its absence fails)."""
    exe = MLFLOW_VENV / "bin" / "mlflow"
    if not exe.exists():
        assert os.environ.get("CI") != "true", f"no MLflow server venv at {MLFLOW_VENV}: `make mlflow` builds it"
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = tmp_path_factory.mktemp("mlflow")
    log = (d / "server.log").open("w")
    cmd = [str(exe), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    cmd += ["--backend-store-uri", f"sqlite:///{d / 'db.sqlite'}", "--artifacts-destination", str(d / "artifacts")]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"mlflow server did not start on {url}; see {log.name}") from None
            time.sleep(0.3)
    yield url
    os.killpg(proc.pid, 15)  # its gunicorn/uvicorn workers too
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=30)


def _settings(backend: str, root: Path, mlflow_uri: str | None) -> TrackingSection:
    return TrackingSection(
        backend=backend,
        responses=5,
        tensorboard_dir=str(root / "tb"),
        mlflow_uri=mlflow_uri or "",
        mlflow_experiment="rlvr-test",
        wandb_dir=str(root / "wb"),
    )


def _backends(mlflow_uri: str | None) -> list[str]:
    return ["tensorboard", "wandb"] + (["mlflow"] if mlflow_uri else [])


@pytest.fixture(scope="module")
def tracked(tmp_path_factory: pytest.TempPathFactory, small_config: Config, mlflow_uri: str | None) -> Path:
    """Two iterations, evaluated before each and after the last; every backend gets evaluate(0) and
    iteration 0 in a first session, the rest in a second one (a resumed run)."""
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["rollout"] |= {"prompts_per_iteration": 4}
    data["eval"] = {"every": 1, "prompts": 4}
    root = tmp_path_factory.mktemp("tracking")
    d = root / "run"
    create_or_open(d, Config.model_validate(data), 2)
    stages.prepare(d)
    for stage in (stages.evaluate, stages.rollout, stages.verify, stages.update):
        stage(d, 0)
    for backend in _backends(mlflow_uri):
        assert sync(d, _settings(backend, root, mlflow_uri)).sent == ["heldout:0", "train:0"]
    close_trackers()  # the first process ends
    for stage in (stages.evaluate, stages.rollout, stages.verify, stages.update):
        stage(d, 1)
    stages.evaluate(d, 2)
    for backend in _backends(mlflow_uri):
        assert sync(d, _settings(backend, root, mlflow_uri)).sent == ["heldout:1", "train:1", "heldout:2"]
    close_trackers()
    return d


def _sql(run: Path, query: str) -> dict[int, float]:
    return {r["iteration"]: r["v"] for r in run_sql(run, query).to_pylist()}


REWARD_SQL = "SELECT iteration, avg(reward) AS v FROM scores GROUP BY 1"
HELDOUT_SQL = "SELECT iteration, avg(correct::INT) AS v FROM evals GROUP BY 1"


def test_tensorboard_event_files_read_back_with_tensorboards_reader(tracked: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    t = target(open_run(tracked), _settings("tensorboard", tracked.parent, None))
    assert len(list(Path(t.where).glob("events.out.tfevents.*"))) == 2  # one per session, one log dir
    acc = EventAccumulator(t.where, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    reward = acc.Scalars("train/reward_mean")
    assert [e.step for e in reward] == [0, 1]  # each step once, across both sessions
    sql = _sql(tracked, REWARD_SQL)  # keyed by iteration: GROUP BY returns its rows in no set order
    assert [e.value for e in reward] == pytest.approx([sql[e.step] for e in reward], rel=1e-6)
    held = acc.Scalars("heldout/accuracy")
    assert [e.step for e in held] == [0, 1, 2]
    assert [e.value for e in held] == pytest.approx([_sql(tracked, HELDOUT_SQL)[i] for i in (0, 1, 2)])
    assert [e.step for e in acc.Scalars("update/groups_dropped")] == [0, 1]  # entropy: only where a group had signal
    assert "seconds/rollout" in acc.Tags()["scalars"] and "train/pass_rate/arithmetic" in acc.Tags()["scalars"]
    texts = acc.Tensors("responses")
    assert [e.step for e in texts] == [0, 1]
    first = run_sql(tracked, "SELECT response_text FROM rollouts WHERE iteration = 1 ORDER BY prompt_id, sample_idx LIMIT 1")
    table = texts[1].tensor_proto.string_val[0].decode()
    assert table.startswith("| prompt_id | sample_idx |") and len(table.splitlines()) == 2 + 5
    assert first.to_pylist()[0]["response_text"].replace("|", "\\|").replace("\n", "<br>")[:20] in table


def test_mlflow_server_holds_one_run_with_every_step_once(tracked: Path, mlflow_uri: str | None) -> None:
    if mlflow_uri is None:
        pytest.skip(f"LOUD SKIP: no MLflow server venv at {MLFLOW_VENV}; build it with `make mlflow` (CI does)")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_uri)
    exp = client.get_experiment_by_name("rlvr-test")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1  # the resumed session logged into the first session's run
    run_id = runs[0].info.run_id
    state = json.loads(next((tracked / "tracking").glob("mlflow-*.json")).read_text())
    assert state["tracker"]["run_id"] == run_id and runs[0].info.status == "FINISHED"
    reward = client.get_metric_history(run_id, "train/reward_mean")
    assert [m.step for m in reward] == [0, 1]
    sql = _sql(tracked, REWARD_SQL)
    assert [m.value for m in reward] == pytest.approx([sql[m.step] for m in reward])
    assert [m.step for m in client.get_metric_history(run_id, "heldout/accuracy")] == [0, 1, 2]
    assert runs[0].data.params["rollout.group_size"] == "4" and runs[0].data.tags["rlvr.run"] == str(tracked)
    arts = [a.path for a in client.list_artifacts(run_id, "responses")]
    assert arts == ["responses/iteration_000000.json", "responses/iteration_000001.json"]
    table = json.loads(Path(client.download_artifacts(run_id, arts[1], str(tracked.parent))).read_text())
    assert table["columns"][:2] == ["prompt_id", "sample_idx"] and len(table["data"]) == 5


def wandb_records(path: Path):
    """The protobuf records of a .wandb file (W&B's LevelDB-style log: a 7-byte header, 32 KiB blocks of
    records with a crc32, length and type), parsed with wandb's own Record message."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B" and struct.unpack("<HB", data[4:7]) == (0xBEE1, 0)
    pos, pending, block = 7, b"", 32768
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk = data[pos + 7 : pos + 7 + length]
        assert zlib.crc32(chunk, zlib.crc32(bytes([kind]))) == crc, f"{path}: bad record at byte {pos}"
        pos += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # a full record, or the last piece of one
            rec = wandb_internal_pb2.Record()
            rec.ParseFromString(pending)
            yield rec


def test_wandb_offline_runs_parse_back_with_every_step_once(tracked: Path) -> None:
    state = json.loads(next((tracked / "tracking").glob("wandb-*.json")).read_text())["tracker"]
    folders = sorted((tracked.parent / "wb" / "wandb").glob(f"offline-run-*-{state['run_id']}"))
    assert len(folders) == 2  # one per session, one run id
    rows = []
    for folder in folders:
        for rec in wandb_records(folder / f"run-{state['run_id']}.wandb"):
            if rec.WhichOneof("record_type") == "history":
                rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in rec.history.item})
    steps = [r["_step"] for r in rows]
    assert steps == list(range(5)) and state["next_step"] == 5  # heldout:0 train:0 | heldout:1 train:1 heldout:2
    reward = {r["iteration"]: r["train/reward_mean"] for r in rows if "train/reward_mean" in r}
    assert reward == pytest.approx(_sql(tracked, REWARD_SQL))
    held = {r["iteration"]: r["heldout/accuracy"] for r in rows if "heldout/accuracy" in r}
    assert held == pytest.approx(_sql(tracked, HELDOUT_SQL))
    tables = [r for r in rows if "responses/path" in r]
    assert [r["iteration"] for r in tables] == [0, 1] and all(r["responses/nrows"] == 5 for r in tables)
    assert (folders[1] / "files" / tables[1]["responses/path"]).is_file()


def test_rlvr_track_replays_a_run_once(tracked: Path, tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    args = ["track", str(tracked), "--backend", "tensorboard", "--set", f"tracking.tensorboard_dir={tmp_path}"]
    config = (tracked / "run.toml").read_bytes()
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "step 0 train:" in first.output and "sent 5 part(s) to tensorboard" in first.output
    assert f"tensorboard --logdir {tmp_path}" in first.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "nothing new to send" in again.output and "all 5 committed part(s)" in again.output
    acc = EventAccumulator(str(tmp_path / "run"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("train/reward_mean")] == [0, 1]
    assert (tracked / "run.toml").read_bytes() == config  # a replay changes no config


def test_track_refusals_name_the_fix(tracked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(TrackingError, match=r"tracking.mlflow_uri .*MLFLOW_TRACKING_URI"):
        sync(tracked, TrackingSection(backend="mlflow"))
    monkeypatch.setitem(trackers.MODULES, "wandb", ("rlvr_no_such_package",))
    with pytest.raises(TrackingError, match=r"pip install 'rlvr\[wandb\]'"):
        sync(tracked, TrackingSection(backend="wandb"))
    off = CliRunner().invoke(app, ["track", str(tracked)])
    assert off.exit_code == 2 and "--backend tensorboard, mlflow or wandb" in off.output
    other = CliRunner().invoke(app, ["track", str(tracked), "--set", "rollout.group_size=2"])
    assert other.exit_code == 2 and "[tracking] settings only" in other.output
    assert sync(tracked).target is None  # the run's own [tracking]: backend none sends nothing


def test_tracking_is_a_setting_an_existing_run_may_change(tracked: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(tracked, copy)
    run = open_run(copy)
    changed = Config.model_validate(run.data | {"tracking": {"backend": "tensorboard"}})
    assert changed.hash() == run.config.hash()  # like [checkpoint]: it changes no output
    again = create_or_open(copy, changed, None)  # no "another config" refusal
    assert again.config.tracking.backend == "tensorboard" and again.config_hash == run.config_hash
    assert "# Experiment tracker" in CliRunner().invoke(app, ["config"]).output


def test_a_killed_and_resumed_training_run_continues_one_wandb_run(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    """The flow's own hook, through the CLI: SIGKILLed inside iteration 1's update, then `rlvr resume`."""
    from rlvr.store.commit import FAULT_ENV

    cfg = tmp_path / "small.toml"
    cfg.write_text(small_config.to_toml())
    run = tmp_path / "run"
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "rlvr.flows.cli"]
    train = [*cmd, "train", str(cfg), "--run", str(run), "--set", "tracking.backend=wandb", "--set", "tracking.responses=3"]
    killed = subprocess.run(train, env={**env, FAULT_ENV: "update:1:before_record"}, capture_output=True, text=True, timeout=900)
    assert killed.returncode == -9, killed.stderr[-3000:]
    state_file = next((run / "tracking").glob("wandb-*.json"))
    assert json.loads(state_file.read_text())["sent"] == ["train:0"]  # sent as update(0) committed
    resumed = subprocess.run([*cmd, "resume", str(run)], env=env, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    state = json.loads(state_file.read_text())
    assert state["sent"] == ["train:0", "train:1"] and state["tracker"]["next_step"] == 2
    folders = sorted((run / "tracking" / "wandb").glob(f"offline-run-*-{state['tracker']['run_id']}"))
    assert len(folders) == 2  # the killed session's and the resumed one's: one run id
    rows = [
        {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in rec.history.item}
        for folder in folders
        for rec in wandb_records(folder / f"run-{state['tracker']['run_id']}.wandb")
        if rec.WhichOneof("record_type") == "history"
    ]
    assert [(r["_step"], r["iteration"]) for r in rows] == [(0, 0), (1, 1)]
    assert {r["iteration"]: r["train/reward_mean"] for r in rows} == pytest.approx(_sql(run, REWARD_SQL))
