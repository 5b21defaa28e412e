"""Asynchronous rollout with bounded staleness (rollout.max_staleness) and the warm trainer (update.warm).

- the plan (rlvr.config.plan), pure: behaviour versions, order and lanes for k = 0, 1, 2; k = 0 is
  the order rlvr always ran, and rollout's fingerprint is the one it always had;
- a tiny-model run with k = 1 (a parity reward, so every group has signal whatever the model
  samples): rows and records carry the policy version and staleness, rollout(i+1) starts before
  update(i) commits, MIS figures land in `updates`, and the warm trainer serves updates 1 and 2;
- the same run with update.warm = false: the same bytes (timing columns aside);
- the same run under checkpoint.keep_last = 1, SIGKILLed inside update(1) (rollout(2) possibly
  half written beside it), then resumed: the same bytes as the unkilled run.

Run: .venv/bin/python -m pytest tests/e2e/test_async.py -x -q   (the runs take a few minutes on 2 cores)
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.config.plan import behaviour_version, stage_deps, stage_plan
from rlvr.schema import UPDATES, RunPaths
from rlvr.store.commit import FAULT_ENV, read_record
from rlvr.views.sql import run_sql

TIMING = {"seconds", "peak_memory_mb"}


def _old_plan(n: int, evals: list[int]) -> list[tuple]:
    """The order rlvr ran before max_staleness existed (Config.stage_plan of main, verbatim)."""
    plan: list[tuple] = [("prepare", None)]
    for i in range(n):
        plan += [("evaluate", i)] if i in evals else []
        plan += [("rollout", i), ("verify", i), ("update", i)]
    if n in evals:
        plan.append(("evaluate", n))
    return plan


@pytest.mark.parametrize("n,evals", [(1, []), (3, []), (4, [0, 2, 4]), (5, [0, 5])])
def test_k0_plan_is_the_old_order_and_serial(n: int, evals: list[int]) -> None:
    plan = stage_plan(n, evals, 0)
    assert plan == _old_plan(n, evals)
    deps = stage_deps(plan, 0)
    for k, key in enumerate(plan[1:], start=1):  # with k = 0 each stage waits for the one before it
        assert plan[k - 1] in deps[key] or _reaches(deps, key, plan[k - 1]), key


def _reaches(deps: dict, key: tuple, target: tuple) -> bool:
    return any(d == target or _reaches(deps, d, target) for d in deps[key])


def test_k1_and_k2_plans_sample_older_versions_and_overlap_the_update() -> None:
    assert [behaviour_version(i, 1) for i in range(4)] == [0, 0, 1, 2]
    assert [behaviour_version(i, 2) for i in range(5)] == [0, 0, 0, 1, 2]
    plan = stage_plan(3, [0, 3], 1)
    assert plan == [
        ("prepare", None),
        ("evaluate", 0),
        ("rollout", 0),
        ("verify", 0),
        ("rollout", 1),
        ("verify", 1),
        ("update", 0),
        ("rollout", 2),
        ("verify", 2),
        ("update", 1),
        ("update", 2),
        ("evaluate", 3),
    ]
    deps = stage_deps(plan, 1)
    # rollout(i+1) does not wait for update(i): they may run together
    for i in range(2):
        assert not _reaches(deps, ("rollout", i + 1), ("update", i))
        assert not _reaches(deps, ("update", i), ("rollout", i + 1))
    assert _reaches(deps, ("rollout", 2), ("update", 0))  # v1 must be committed before rollout(2) samples it
    assert deps[("evaluate", 3)] == [("prepare", None), ("verify", 2), ("update", 2)]
    plan2 = stage_plan(4, [], 2)
    deps2 = stage_deps(plan2, 2)
    assert plan2.index(("rollout", 2)) < plan2.index(("update", 0))  # rollouts 0..2 all sample v0
    assert _reaches(deps2, ("rollout", 3), ("update", 0)) and not _reaches(deps2, ("rollout", 3), ("update", 1))
    for k, key in enumerate(plan2):  # a topological order: every dependency comes earlier
        assert all(plan2.index(d) < k for d in deps2[key])


def _config(tmp_path: Path, small_config: Config, **update) -> Config:
    parity = tmp_path / "parity.sql"
    parity.write_text("SELECT prompt_id, sample_idx, (sample_idx % 2)::DOUBLE AS score, 'odd sample' AS reason FROM responses")
    data = small_config.model_dump()
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]
    data["rollout"]["max_staleness"] = 1
    data["update"] |= {"mis_cap": 2.0, **update}
    return Config.model_validate(data)


def _outputs(paths: RunPaths, plan: list[tuple]) -> dict[tuple, list[tuple[str, str]]]:
    return {k: [(o.path, o.sha256) for o in read_record(paths.record(*k)).outputs] for k in plan}


def _same_bytes(mine: RunPaths, ref: RunPaths, plan: list[tuple]) -> None:
    """Every committed file equal, except the updates shards, whose rows are equal but for timing."""
    a, b = _outputs(mine, plan), _outputs(ref, plan)
    assert [[p for p, _ in a[k]] for k in plan] == [[p for p, _ in b[k]] for k in plan]
    differ = sorted(p for k in plan for (p, x), (_, y) in zip(a[k], b[k], strict=True) if x != y)
    assert all(p.startswith("updates/") for p in differ), differ
    cols = ", ".join(c for c in UPDATES.names if c not in TIMING)
    q = f"SELECT {cols} FROM updates ORDER BY global_step"
    assert run_sql(str(mine.root), q).to_pylist() == run_sql(str(ref.root), q).to_pylist()


@pytest.fixture(scope="module")
def async_run(tmp_path_factory: pytest.TempPathFactory, prefect_api: str, small_config: Config, tiny_model: Path):
    """One k = 1 run of 3 iterations (warm trainer, MIS), trained in this process by the flow."""
    from rlvr.flows.train import train

    tmp = tmp_path_factory.mktemp("async")
    run = create_or_open(tmp / "run", _config(tmp, small_config), 3)
    train(str(run.paths.root))
    return run


@pytest.mark.slow
def test_async_run_samples_the_plan_versions_and_overlaps(async_run) -> None:
    d, paths = str(async_run.paths.root), async_run.paths
    rows = run_sql(
        d,
        "SELECT iteration, min(policy_version) AS v, max(policy_version) AS w, max(staleness) AS s FROM rollouts GROUP BY 1 ORDER BY 1",
    ).to_pylist()
    assert rows == [{"iteration": i, "v": v, "w": v, "s": i - v} for i, v in enumerate([0, 0, 1])]
    for i, v in enumerate([0, 0, 1]):
        rec = read_record(paths.record("rollout", i))
        assert rec.inputs["policy_version"] == v and rec.extra["staleness"] == i - v and rec.extra["max_staleness"] == 1
        assert (
            rec.inputs["policy"]
            == (read_record(paths.record("prepare" if v == 0 else "update", None if v == 0 else v - 1))).digest()
        )
    upd = run_sql(
        d,
        "SELECT iteration, max(staleness) AS s, max(is_weight_max) AS w, max(is_capped_frac) AS c FROM updates GROUP BY 1 ORDER BY 1",
    ).to_pylist()
    assert [u["s"] for u in upd] == [0, 1, 1]
    assert all(u["w"] is not None and u["w"] > 0 and 0 <= u["c"] <= 1 for u in upd)  # MIS figures recorded

    def span(stage: str, i: int) -> tuple[float, float]:
        rec = read_record(paths.record(stage, i))
        end = datetime.fromisoformat(rec.created_at).timestamp()
        return end - rec.seconds, end

    for i in range(2):  # rollout(i+1) started before update(i) committed: they ran side by side
        assert span("rollout", i + 1)[0] < span("update", i)[1], i
    warm = [read_record(paths.record("update", i)).extra["warm"] for i in range(3)]
    assert warm == [False, True, True]  # v0 has no trainer state to hold; then the held trainer served
    from rlvr.views.status import status_rows

    notes = {(r["stage"], r["iteration"]): r["note"] for r in status_rows(d)}
    assert notes[("rollout", 1)].endswith("sampled v0 (staleness 1)") and "staleness" not in notes[("rollout", 0)]
    assert notes[("update", 1)].endswith("warm trainer") and not notes[("update", 0)].endswith("warm trainer")


@pytest.mark.slow
def test_warm_and_cold_trainers_write_the_same_bytes(
    async_run, tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    from rlvr.flows.train import train

    cold = create_or_open(tmp_path / "cold", _config(tmp_path, small_config, warm=False), 3)
    train(str(cold.paths.root))
    assert [read_record(cold.paths.record("update", i)).extra["warm"] for i in range(3)] == [False] * 3
    _same_bytes(cold.paths, async_run.paths, async_run.config.stage_plan())


@pytest.mark.slow
def test_async_run_killed_in_an_update_resumes_byte_identical(
    async_run, tmp_path: Path, prefect_api: str, small_config: Config, tiny_model: Path
) -> None:
    """With keep_last = 1, retention must keep v_i while rollout(i+1), beside update(i), still samples it."""
    cfg = tmp_path / "async.toml"
    keep1 = _config(tmp_path, small_config)
    cfg.write_text(keep1.model_copy(update={"checkpoint": keep1.checkpoint.model_copy(update={"keep_last": 1})}).to_toml())
    run_dir = tmp_path / "run"
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"}

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rlvr.flows.cli", *args],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=900,
            start_new_session=True,
        )

    killed = cli("train", str(cfg), "--run", str(run_dir), "--iterations", "3", **{FAULT_ENV: "update:1:before_record"})
    assert killed.returncode == -9, killed.stderr[-3000:]
    paths = RunPaths(run_dir.resolve())
    assert read_record(paths.record("update", 1)) is None and read_record(paths.record("rollout", 1)) is not None
    resumed = cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _same_bytes(paths, async_run.paths, async_run.config.stage_plan())
    assert sorted(p.name for p in (paths.root / "policy").iterdir()) == ["v000000", "v000003"]
