"""End to end with every real part: Prefect flow, tiny Llama rollouts, DuckDB verify, torch GRPO
update, Parquet run store, the `rlvr` CLI in a subprocess, a SIGKILL and a resume."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from safetensors.torch import load_file

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import ITERATION_STAGES, PREPARE, UPDATES, RunPaths
from rlvr.store.commit import FAULT_ENV
from rlvr.store.records import read_record
from rlvr.views.sql import run_sql
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow


def _records(paths: RunPaths, iterations: int) -> dict[tuple, str | None]:
    keys = [(PREPARE, None)] + [(s, i) for i in range(iterations) for s in ITERATION_STAGES]
    return {k: (r.created_at if (r := read_record(paths.record(*k))) else None) for k in keys}


def test_flow_runs_two_iterations_and_the_gradient_moves_the_weights(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    from rlvr.flows.train import train

    # the test makes its own signal instead of hoping the machine-built tiny model samples some: a SQL
    # reward plug-in pays odd samples, so every group has reward variance whatever the model answers
    parity = tmp_path / "parity.sql"
    parity.write_text("SELECT prompt_id, sample_idx, (sample_idx % 2)::DOUBLE AS score, 'odd sample' AS reason FROM responses")
    data = small_config.model_dump()
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]
    run = create_or_open(tmp_path / "run", Config.model_validate(data), 2)
    d = str(run.paths.root)
    state = train(d, return_state=True)
    results = state.result()
    assert [r["stage"] for r in results] == ["prepare"] + list(ITERATION_STAGES) * 2
    assert not any(r["skipped"] for r in results)

    G, P = small_config.rollout.group_size, small_config.rollout.prompts_per_iteration
    counts = run_sql(
        d,
        "SELECT iteration, count(*) AS n, count(DISTINCT prompt_id) AS p, min(engine) AS e, "
        "max(policy_version) AS v FROM rollouts GROUP BY 1 ORDER BY 1",
    ).to_pylist()
    assert counts == [{"iteration": i, "n": P * G, "p": P, "e": "transformers", "v": i} for i in range(2)]
    sizes = run_sql(d, "SELECT DISTINCT count(*) AS g FROM rollouts GROUP BY iteration, prompt_id").to_pylist()
    assert sizes == [{"g": G}]
    signal = run_sql(d, "SELECT count(DISTINCT (iteration, prompt_id)) AS n FROM scores WHERE group_std > 0").to_pylist()
    assert signal == [{"n": 2 * P}], "every group has reward variance (the parity reward)"

    upd = run_sql(d, "SELECT iteration, grad_norm, tokens, groups_used FROM updates ORDER BY 1").to_pylist()
    assert all(u["grad_norm"] > 0 and u["tokens"] > 0 and u["groups_used"] > 0 for u in upd)
    # weight decay is 0, so every change of the weights comes from the policy gradient (that the change
    # raises the reward is tests/e2e/test_learning.py's job)
    assert small_config.update.weight_decay == 0.0
    v0 = load_file(run.paths.policy_dir(0) / "model.safetensors")
    v2 = load_file(run.paths.policy_dir(2) / "model.safetensors")
    assert any(not (v0[k] == v2[k]).all() for k in v0)
    assert (run.paths.policy_dir(2) / "trainer_state.pt").is_file()

    # Prefect artifacts of this flow run: a summary per iteration, the metrics table, progress at 100%
    arts = {a.key: a for a in _artifacts(state.state_details.flow_run_id)}
    assert {"rlvr-run-iteration-0", "rlvr-run-iteration-1", "rlvr-run-metrics", "rlvr-run-progress"} <= set(arts)
    assert "| reward_mean |" in arts["rlvr-run-iteration-1"].data and arts["rlvr-run-progress"].data == 100.0
    table = (
        json.loads(arts["rlvr-run-metrics"].data)
        if isinstance(arts["rlvr-run-metrics"].data, str)
        else arts["rlvr-run-metrics"].data
    )
    assert [r["iteration"] for r in table] == [0, 1] and all(r["groups"] == 16 for r in table)

    # a second run of the flow is a resume with nothing to do: every stage skips itself
    before = _records(run.paths, 2)
    again = train(d)
    assert all(r["skipped"] for r in again)
    assert _records(run.paths, 2) == before


def _artifacts(flow_run_id) -> list:
    """The latest version of each artifact that one flow run created, read back from the server."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    async def read() -> list:
        async with get_client() as client:
            return await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
            )

    arts = sorted(asyncio.run(read()), key=lambda a: a.created)
    return list({a.key: a for a in arts}.values())


def test_kill_during_second_update_then_resume(tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path) -> None:
    cfg = tmp_path / "small.toml"
    cfg.write_text(small_config.to_toml())
    run_dir = tmp_path / "run"
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}

    killed = run_cli(
        "train", str(cfg), "--run", str(run_dir), "--iterations", "2", env={**env, FAULT_ENV: "update:1:before_rename"}
    )
    assert killed.returncode == -9, killed.stderr[-3000:]  # SIGKILLed inside iteration 1's update
    paths = RunPaths(run_dir.resolve())
    first = _records(paths, 2)
    assert first[("update", 1)] is None and all(v for k, v in first.items() if k != ("update", 1))
    assert list(paths.root.glob("policy/.tmp-*")), "the killed update had started writing v2"
    assert not paths.policy_dir(2).exists()
    shard_times = {p: p.stat().st_mtime_ns for p in paths.root.glob("*/iteration=*/*.parquet")}

    resumed = run_cli("resume", str(run_dir), env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = _records(paths, 2)
    for key, created in first.items():  # nothing committed was redone...
        if key != ("update", 1):
            assert after[key] == created, key
    assert after[("update", 1)] is not None  # ...and the missing stage was
    assert {p: p.stat().st_mtime_ns for p in shard_times} == shard_times
    assert paths.policy_dir(2).is_dir() and not list(paths.root.glob("policy/.tmp-*"))

    status = json.loads(run_cli("status", str(run_dir), "--format", "json", env=env).stdout)
    assert len(status) == 7 and all(r["committed"] for r in status)
    assert status[1]["stage"] == "rollout" and status[1]["note"].startswith("transformers (cold, start ")
    out = run_cli(
        "sql",
        str(run_dir),
        "SELECT iteration, avg(reward) AS mean_reward, count(*) AS n FROM scores GROUP BY 1 ORDER BY 1",
        "--format",
        "json",
        env=env,
    )
    rows = json.loads(out.stdout)
    assert [r["iteration"] for r in rows] == [0, 1] and all(0.0 <= r["mean_reward"] <= 1.0 for r in rows)
    assert all(r["n"] == 64 for r in rows)


def _outputs(paths: RunPaths, plan: list[tuple]) -> dict[tuple, list[tuple[str, str]]]:
    return {k: [(o.path, o.sha256) for o in read_record(paths.record(*k)).outputs] for k in plan}


def test_kill_twice_and_resume_under_keep_last_1_equals_an_unkilled_run(
    tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    """Aggressive retention ([checkpoint] keep_last = 1) and two SIGKILLs: once after update(1)
    committed v2 but before it pruned v1, once inside update(2), which needs v2's trainer state.
    The resumed run's every committed output equals an unkilled run's (default retention), byte
    for byte; only v0 and the newest version keep weights, and the pruned versions' rows stay."""
    from rlvr.flows.train import train

    from rlvr.files import file_sha256

    reference = create_or_open(tmp_path / "reference", small_config, 3)
    train(str(reference.paths.root))

    cfg = tmp_path / "keep1.toml"
    cfg.write_text(
        small_config.model_copy(update={"checkpoint": small_config.checkpoint.model_copy(update={"keep_last": 1})}).to_toml()
    )
    run_dir = tmp_path / "run"
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}
    paths = RunPaths(run_dir.resolve())
    killed = run_cli(
        "train", str(cfg), "--run", str(run_dir), "--iterations", "3", env={**env, FAULT_ENV: "update:1:before_prune"}
    )
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert read_record(paths.record("update", 1)) is not None and paths.policy_dir(1).is_dir()  # committed, not yet pruned
    killed = run_cli("resume", str(run_dir), env={**env, FAULT_ENV: "update:2:before_rename"})
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert not paths.policy_dir(1).exists(), "update(1), skipped on resume, finishes the prune the kill cut short"
    assert (paths.policy_dir(2) / "trainer_state.pt").is_file()  # what update(2) resumes from
    resumed = run_cli("resume", str(run_dir), env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    plan = reference.config.stage_plan()
    mine, ref = _outputs(paths, plan), _outputs(reference.paths, plan)
    assert [[p for p, _ in mine[k]] for k in plan] == [[p for p, _ in ref[k]] for k in plan]
    differ = sorted(p for k in plan for (p, a), (_, b) in zip(mine[k], ref[k], strict=True) if a != b)
    # per-step metrics carry wall-clock seconds and peak memory; every other byte is equal
    assert differ == [f"updates/iteration={i:06d}/part-000000.parquet" for i in range(3)], differ
    timing = {"seconds", "peak_memory_mb"}
    cols = ", ".join(c for c in UPDATES.names if c not in timing)
    q = f"SELECT {cols} FROM updates ORDER BY global_step"
    assert run_sql(str(paths.root), q).to_pylist() == run_sql(str(reference.paths.root), q).to_pylist()
    on_disk = [
        p for p in paths.root.rglob("*") if p.is_file() and "_stages" not in p.parts and p.name not in ("run.toml", ".lock")
    ]
    listed = {path: sha for outs in _outputs(paths, plan).values() for path, sha in outs}
    assert {str(p.relative_to(paths.root)): file_sha256(p) for p in on_disk} == {
        k: v for k, v in listed.items() if (paths.root / k).is_file()
    }
    assert sorted(p.name for p in (paths.root / "policy").iterdir()) == ["v000000", "v000003"]
    assert sorted(p.name for p in paths.policy_dir(3).iterdir()) == sorted(
        p.name for p in reference.paths.policy_dir(3).iterdir()
    )
    assert sorted(p.name for p in (reference.paths.root / "policy").iterdir()) == ["v000000", "v000002", "v000003"]
    assert not (reference.paths.policy_dir(2) / "trainer_state.pt").exists()

    rows = run_sql(str(paths.root), "SELECT policy_version, count(*) AS n FROM rollouts GROUP BY 1 ORDER BY 1").to_pylist()
    assert [r["policy_version"] for r in rows] == [0, 1, 2]  # pruned versions' rollouts stay queryable
    status = json.loads(run_cli("status", str(run_dir), "--format", "json", env=env).stdout)
    assert [r["weights"] for r in status if r["stage"] in ("prepare", "update")] == ["v0", "v1 pruned", "v2 pruned", "v3"]
    again = run_cli("resume", str(run_dir), env=env)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_scheduled_extend_adds_iterations(tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path) -> None:
    from rlvr.flows.serve import deployment_args
    from rlvr.flows.train import extend

    run = create_or_open(tmp_path / "run", small_config, 1)
    d = str(run.paths.root)
    first = extend(d, 1)  # nothing ran yet: iteration 0 and the added iteration 1
    assert [(r["stage"], r["iteration"]) for r in first if r["stage"] == "update"] == [("update", 0), ("update", 1)]
    assert create_or_open(d, None, None).config.run.iterations == 2
    dep = extend.to_deployment(**deployment_args(run.paths.root, cron="0 * * * *", every=None, add_iterations=3, name=None))
    assert dep.name == "rlvr-run" and dep.parameters == {"run_dir": d, "add_iterations": 3}
    assert dep.schedules[0].schedule.cron == "0 * * * *"
    assert dep.concurrency_limit == 1  # scheduled runs queue instead of failing on the run's writer lock
