"""Config tree: defaults, validation messages that name the field and the fix, run.toml freezing."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.config import Config, ConfigError, load_config, parse_config
from rlvr.store.run import RunError, open_run


def test_defaults_are_valid_and_roundtrip_through_toml(tmp_path: Path) -> None:
    cfg = Config()
    p = tmp_path / "c.toml"
    p.write_text(cfg.to_toml())
    assert load_config(p) == cfg
    assert load_config(None) == cfg


def test_group_size_below_two_names_field_and_fix() -> None:
    with pytest.raises(ConfigError) as e:
        parse_config({"rollout": {"group_size": 1}}, "x.toml")
    msg = str(e.value)
    assert "rollout.group_size" in msg and "at least 2" in msg and "x.toml" in msg


def test_unknown_field_suggests_the_close_name() -> None:
    with pytest.raises(ConfigError) as e:
        parse_config({"rollout": {"group_sise": 4}})
    assert "rollout.group_sise" in str(e.value) and "did you mean 'group_size'" in str(e.value)


@pytest.mark.parametrize(
    ("data", "where", "close"),
    [
        ({"task": {"datasets": [{"pth": "x.jsonl"}]}}, "task.datasets.0.pth", "path"),
        ({"task": {"datasets": [{"path": "x.jsonl", "columns": {"promt": "q"}}]}}, "task.datasets.0.columns.promt", "prompt"),
        ({"verify": {"rewards": [{"name": "a", "sql": "a.sql", "wieght": 2.0}]}}, "verify.rewards.0.wieght", "weight"),
        ({"verify": {"weights": {"logic": {"formt": 0.1}}}}, "verify.weights.logic.formt", "format"),
    ],
)
def test_unknown_field_inside_a_list_or_table_of_sections_suggests_the_close_name(data: dict, where: str, close: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(data)
    assert f"{where}: unknown field; did you mean '{close}'?" in str(e.value), str(e.value)


def test_wrong_type_shows_the_value() -> None:
    with pytest.raises(ConfigError) as e:
        parse_config({"update": {"lr": "fast"}})
    assert "update.lr" in str(e.value) and "'fast'" in str(e.value)


def test_too_many_problems_is_explained() -> None:
    with pytest.raises(ConfigError, match=r"task.n_train \+ task.n_test = 1000 but only 50 distinct"):
        parse_config({"task": {"max_operand": 4, "ops": "+-", "n_train": 900, "n_test": 100}})


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist; run `rlvr config"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\nseed = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_hash_ignores_iterations_only() -> None:
    a = Config()
    assert a.hash() == parse_config({"run": {"iterations": 9}}).hash()
    assert a.hash() != parse_config({"run": {"seed": 1}}).hash()


def _mark_started(run: Path) -> None:
    """Commit an (empty) prepare stage: from then on the run's config is frozen."""
    from rlvr.schema import PREPARE, RunPaths
    from rlvr.store.commit import begin_stage

    with begin_stage(RunPaths(run.resolve()), PREPARE, None, {}) as tx:
        tx.commit(rows=0)


def test_run_config_is_frozen(tmp_path: Path) -> None:
    run = tmp_path / "r"
    create_or_open(run, parse_config({"rollout": {"group_size": 4}}), iterations=2)
    _mark_started(run)
    # continuing without a config keeps it; raising iterations is allowed
    assert create_or_open(run, None, iterations=5).config.run.iterations == 5
    with pytest.raises(RunError) as e:
        create_or_open(run, parse_config({"rollout": {"group_size": 6}}), None)
    assert "rollout.group_size: 4 -> 6" in str(e.value) and "new --run folder" in str(e.value)
    # a hand edit of run.toml is caught
    text = (run / "run.toml").read_text().replace("group_size = 4", "group_size = 5")
    (run / "run.toml").write_text(text)
    with pytest.raises(RunError, match="was edited after the run started"):
        open_run(run)


def test_config_of_a_run_that_committed_nothing_may_be_corrected(tmp_path: Path) -> None:
    """A first start that failed before prepare committed (say, a wrong model.path) leaves run.toml
    behind; the corrected retry replaces it instead of refusing "another config"."""
    run = tmp_path / "r"
    create_or_open(run, parse_config({"rollout": {"group_size": 4}}), iterations=2)
    fixed = create_or_open(run, parse_config({"rollout": {"group_size": 6}}), None)
    assert fixed.config.rollout.group_size == 6 and open_run(run).config.rollout.group_size == 6


def test_checkpoint_retention_may_change_on_a_live_run(tmp_path: Path) -> None:
    """[checkpoint] changes no output: it is left out of the hash, and a config that sets it
    changes it on an existing run; one that does not set it keeps the run's."""
    run = tmp_path / "r"
    first = create_or_open(run, parse_config({"checkpoint": {"keep_last": 3}}), iterations=2)
    _mark_started(run)
    assert parse_config({"checkpoint": {"keep_last": 1}}).hash() == Config().hash()
    changed = create_or_open(run, parse_config({"checkpoint": {"keep_last": 1, "keep_every": 5}}), None)
    assert (changed.config.checkpoint.keep_last, changed.config.checkpoint.keep_every) == (1, 5)
    assert changed.config_hash == first.config_hash
    assert create_or_open(run, parse_config({}), None).config.checkpoint.keep_last == 1
    assert open_run(run).config.checkpoint.keep_every == 5


def test_run_from_an_older_rlvr_keeps_its_identity(tmp_path: Path) -> None:
    """A run.toml written before a config field existed (here: without verify.code_reward) opens
    with that field's default, and keeps its hash (so its stages' fingerprints) when extended."""
    import tomllib

    import tomli_w

    from rlvr.config import hash_data

    run = tmp_path / "r"
    create_or_open(run, None, iterations=2)
    data = tomllib.loads((run / "run.toml").read_text())
    del data["verify"]["code_reward"]
    old_hash = hash_data(data)
    (run / "run.toml").write_text(f"# config_hash = {old_hash}\n\n{tomli_w.dumps(data)}")
    opened = open_run(run)
    assert opened.config_hash == old_hash and opened.config.verify.code_reward == "all_pass"
    extended = create_or_open(run, None, iterations=4)
    assert extended.config_hash == old_hash and extended.config.run.iterations == 4
    assert "code_reward" not in (run / "run.toml").read_text()
    assert open_run(run).config_hash == old_hash


def test_task_names_one_or_a_mixture() -> None:
    assert parse_config({"task": {"name": "logic"}}).task.names == ["logic"]
    assert parse_config({"task": {"name": ["arithmetic", "logic"]}}).task.names == ["arithmetic", "logic"]
    for bad, message in (
        ("poetry", "unknown task 'poetry'; the shipped tasks are arithmetic, humaneval"),
        (["logic", "poetry"], "unknown task 'poetry'"),
        ([], "give a task or a list of tasks"),
        (["logic", "logic"], "a list of distinct tasks"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_config({"task": {"name": bad}})


def test_a_dataset_names_one_of_the_verifiers() -> None:
    """task.datasets.verifier is one of VERIFIERS, whose names are also the problems' `task` values;
    any other name is refused with the list."""
    from rlvr.config import VERIFIERS

    assert VERIFIERS == ("math", "exact", "code", "logic", "retrieval")
    for v in VERIFIERS:
        assert parse_config({"task": {"datasets": [{"path": "x.jsonl", "verifier": v}]}}).task.datasets[0].verifier == v
    with pytest.raises(
        ConfigError, match="task.datasets.0.verifier: unknown verifier 'sql'; use one of math, exact, code, logic, retrieval"
    ):
        parse_config({"task": {"datasets": [{"path": "x.jsonl", "verifier": "sql"}]}})


def test_non_run_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file").write_text("hi")
    with pytest.raises(RunError, match="not empty and holds no run.toml"):
        create_or_open(tmp_path / "x", None, None)
    with pytest.raises(RunError, match="rlvr train --run"):
        open_run(tmp_path / "nothing")


def test_one_writer_per_run(tmp_path: Path) -> None:
    from rlvr.store.locks import writer_lock

    with writer_lock(tmp_path):
        with pytest.raises(RunError, match=f"pid {__import__('os').getpid()}"):
            with writer_lock(tmp_path):
                pass
    with writer_lock(tmp_path):  # released on exit
        pass
