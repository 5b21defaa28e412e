"""Checkpoint retention ([checkpoint] keep_last, keep_every): the plan, pruning as part of the
commit protocol, what stays queryable and visible, and the disk check before an update."""

from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from rlvr import stages
from rlvr.errors import DiskSpaceError, RlvrError
from rlvr.schema import EVALUATE, UPDATE
from rlvr.stages.lineage import StageOrderError, pending
from rlvr.store import retention
from rlvr.store.commit import committed
from rlvr.store.folders import write_text_atomic
from rlvr.store.records import PruneRecord, read_pruned
from rlvr.store.run import open_run
from rlvr.views.status import status_rows
from tests.helpers.run_builder import WEIGHTS_BYTES, build_run, commit_stage

Usage = namedtuple("Usage", "total used free")


def _on_disk(run) -> dict[int, set[str]]:
    return {
        v: {p.name for p in run.paths.policy_dir(v).iterdir()}
        for v in range(run.config.run.iterations + 1)
        if run.paths.policy_dir(v).is_dir()
    }


def test_plan_keeps_v0_the_last_k_every_mth_and_what_is_needed() -> None:
    assert retention.plan([0, 1, 2, 3, 4, 5, 6], keep_last=2, keep_every=3, needed=set()) == ([1, 2, 4], [0, 1, 2, 3, 4, 5])
    assert retention.plan([0, 1, 2, 3], keep_last=1, keep_every=0, needed={1}) == ([2], [0, 1, 2])
    assert retention.plan([0, 1, 2, 3], keep_last=0, keep_every=0, needed=set()) == ([], [])  # 0 = keep everything
    assert retention.plan([0], keep_last=1, keep_every=0, needed=set()) == ([], [])
    assert retention.plan([], keep_last=1, keep_every=0, needed=set()) == ([], [])


def test_prune_deletes_weights_and_old_trainer_states_but_the_run_stays_committed(tmp_path: Path) -> None:
    run = build_run(tmp_path / "r", {"run": {"iterations": 4}, "checkpoint": {"keep_last": 1, "keep_every": 2}})
    assert pending(run) == []
    removed = retention.prune(run)
    weights = {"config.json", "tokenizer.json", "model.safetensors"}
    assert _on_disk(run) == {0: weights, 2: weights, 4: weights | {"trainer_state.pt"}}
    assert len(removed) == 2 * 3 + 3  # v1 and v3 whole, the trainer states of v1, v2, v3 (v0 never had one)
    # every record still counts as committed: pruned files are listed, not lost
    assert pending(run) == []
    assert read_pruned(run.paths)[1].weights and not read_pruned(run.paths)[2].weights
    assert retention.prune(run) == []  # idempotent
    # the rows of pruned versions stay; status says which versions keep weights
    rows = {(r["stage"], r["iteration"]): r for r in status_rows(run.paths.root)}
    assert [rows[("update", i)]["weights"] for i in range(4)] == ["v1 pruned", "v2", "v3 pruned", "v4"]
    assert rows[("prepare", "")]["weights"] == "v0" and all(r["committed"] for r in rows.values())


def test_a_lost_file_is_not_a_pruned_one(tmp_path: Path) -> None:
    run = build_run(tmp_path / "r", {"run": {"iterations": 2}, "checkpoint": {"keep_last": 1}})
    retention.prune(run)
    (run.paths.policy_dir(2) / "model.safetensors").unlink()  # not retention's doing
    assert pending(run) == [(UPDATE, 1)]


def test_a_prune_killed_after_its_record_is_finished_by_the_next(tmp_path: Path) -> None:
    run = build_run(tmp_path / "r", {"run": {"iterations": 3}, "checkpoint": {"keep_last": 1}})
    folder = run.paths.policy_dir(1)
    files = sorted(str(p.relative_to(run.paths.root)) for p in folder.iterdir())
    rec = PruneRecord(version=1, weights=True, files=files, created_at="2026-01-01T00:00:00+00:00")
    write_text_atomic(run.paths.pruned_record(1), rec.model_dump_json())  # the record, then the kill
    assert pending(run) == []
    retention.prune(run)
    assert not folder.exists() and not run.paths.policy_dir(2).exists()
    assert _on_disk(run) == {
        0: {"config.json", "tokenizer.json", "model.safetensors"},
        3: {"config.json", "tokenizer.json", "model.safetensors", "trainer_state.pt"},
    }


def test_a_version_still_to_evaluate_is_kept(tmp_path: Path) -> None:
    data = {"run": {"iterations": 3}, "eval": {"every": 2}, "checkpoint": {"keep_last": 1}}
    run = build_run(tmp_path / "r", data)
    run.paths.record(EVALUATE, 2).unlink()  # evaluate(2) not committed: v2 must stay for it
    retention.prune(run)
    assert set(_on_disk(run)) == {0, 2, 3}
    commit_stage(run, EVALUATE, 2)
    retention.prune(run)
    assert set(_on_disk(run)) == {0, 3}


def test_a_run_from_before_retention_keeps_every_version(tmp_path: Path) -> None:
    import tomllib

    import tomli_w

    from rlvr.config import hash_data

    run = build_run(tmp_path / "r", {"run": {"iterations": 3}})
    data = tomllib.loads(run.paths.config.read_text())
    del data["checkpoint"]
    run.paths.config.write_text(f"# config_hash = {hash_data(data)}\n\n{tomli_w.dumps(data)}")
    assert retention.prune(open_run(run.paths.root)) == [] and set(_on_disk(run)) == {0, 1, 2, 3}


def test_stages_refuse_a_pruned_input_in_one_line(tmp_path: Path) -> None:
    run = build_run(tmp_path / "r", {"run": {"iterations": 2}, "checkpoint": {"keep_last": 1}})
    retention.prune(run)
    run.paths.record("rollout", 1).unlink()  # as if rollout(1) had to be redone: it reads v1, pruned
    with pytest.raises(StageOrderError, match=r"rollout\(1\) needs policy v1, whose weights \[checkpoint\] retention deleted"):
        stages.rollout(run.paths.root, 1)
    assert issubclass(StageOrderError, RlvrError)


def test_update_checks_free_disk_before_it_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """v1 from v0 (no trainer state yet) needs the weights plus twice them for AdamW's moments;
    short of that, update stops before writing anything and names folder, bytes and knobs."""
    run = build_run(tmp_path / "r", {"run": {"iterations": 1}, "checkpoint": {"keep_last": 3}}, upto=3)
    needed = retention.checkpoint_bytes(run.paths.policy_dir(0))
    assert needed == retention.folder_bytes(run.paths.policy_dir(0)) + 2 * WEIGHTS_BYTES
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**9, 10**9 - needed + 1, needed - 1))
    with pytest.raises(DiskSpaceError) as e:
        stages.update(run.paths.root, 0)
    msg = str(e.value)
    assert f"in {run.paths.root / 'policy'}" in msg and f"about {retention.fmt_bytes(needed)}" in msg
    assert "[checkpoint] keep_last = 3, keep_every = 0" in msg and "--set checkpoint.keep_last=1" in msg
    assert len(msg.splitlines()) == 2
    assert not run.paths.policy_dir(1).exists() and not list(run.paths.root.glob("policy/.tmp-*"))
    assert committed(run.paths, UPDATE, 0, {}) is None
    # from v1 on, the estimate is the current version's own size (its trainer state included)
    commit_stage(run, UPDATE, 0)
    assert retention.checkpoint_bytes(run.paths.policy_dir(1)) == retention.folder_bytes(run.paths.policy_dir(1))


def test_retention_of_an_existing_run_changes_with_set(tmp_path: Path) -> None:
    """The disk-space message's advice works: `--set checkpoint.keep_last=1` on an existing run
    changes its retention (and nothing else may change that way)."""
    from rlvr.flows.cli import app
    from typer.testing import CliRunner

    run = build_run(tmp_path / "r", {"run": {"iterations": 2}, "rollout": {"group_size": 4}})
    res = CliRunner().invoke(app, ["train", "--run", str(run.paths.root), "--set", "checkpoint.keep_last=1"])
    assert res.exit_code == 0 and "nothing to do" in " ".join(res.output.split()), res.output
    assert open_run(run.paths.root).config.checkpoint.keep_last == 1 and open_run(run.paths.root).config.rollout.group_size == 4
    res = CliRunner().invoke(app, ["train", "--run", str(run.paths.root), "--set", "rollout.group_size=6"])
    assert res.exit_code == 2 and "rollout.group_size: 4 -> 6" in res.output
