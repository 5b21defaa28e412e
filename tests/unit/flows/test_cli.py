"""The CLI's help and its error paths: clear messages, exit code 2, nothing written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr.config import Config
from rlvr.config.tree import inner_model

runner = CliRunner()


def test_help_lists_the_commands() -> None:
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for cmd in ("train", "resume", "status", "sql", "config"):
        assert cmd in res.output


def test_sql_help_names_every_view_of_a_run_and_of_an_eval_folder() -> None:
    from rlvr.schema import EVAL_FOLDER_TABLES, TABLES

    res = runner.invoke(app, ["sql", "--help"], terminal_width=400)
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for view in [*TABLES, "reward_components", *EVAL_FOLDER_TABLES]:
        assert view in text, view
    assert "rlvr eval --out" in text


def test_config_prints_valid_commented_defaults() -> None:
    res = runner.invoke(app, ["config"])
    assert res.exit_code == 0
    assert Config.model_validate(tomllib.loads(res.output)) == Config()
    # every field of every section is there, under its own section, with its description as a comment
    sections = {}
    for block in res.output.split("\n["):
        name, _, body = block.partition("]\n")
        sections[name] = body
    for section, info in Config.model_fields.items():
        body = sections[section]
        for field, spec in info.annotation.model_fields.items():
            if isinstance(getattr(Config(), section), dict) or field in ("weights",):
                continue
            assert f"# {spec.description}" in body, (section, field)
            if getattr(getattr(Config(), section), field) is None and inner_model(spec.annotation) is not None:
                # an optional table ([update.lora]), printed commented out
                assert f"\n# [{section}.{field}]" in body, (section, field)
                continue
            assert f"\n{field} = " in body or f"\n# {field} = " in body, (section, field)


def test_config_documents_the_fields_of_list_of_table_sections() -> None:
    from rlvr.config import DatasetSection, RewardPlugin

    res = runner.invoke(app, ["config"])
    assert res.exit_code == 0
    for table, model in (("task.datasets", DatasetSection), ("verify.rewards", RewardPlugin)):
        start = res.output.index(f"# [[{table}]]")
        block = res.output[start : res.output.index("\n[", start)]  # up to the next section
        for field, spec in model.model_fields.items():
            if field != "columns":  # a section of its own: below
                assert f"#   # {spec.description}\n#   {field} =" in block, (table, field)
    columns = res.output[res.output.index("#   [task.datasets.columns]") :]
    assert "#     # Column of the split" in columns and "#     split =   (unset)" in columns


def test_bad_config_fails_before_creating_the_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[rollout]\ngroup_size = 1\n")
    res = runner.invoke(app, ["train", str(bad), "--run", str(tmp_path / "run")])
    assert res.exit_code == 2
    assert "rollout.group_size" in res.output and "at least 2" in res.output
    assert not (tmp_path / "run").exists()


def test_set_overrides_name_the_field(tmp_path: Path) -> None:
    res = runner.invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", "task.name=poetry"])
    assert res.exit_code == 2 and "task.name" in res.output and "'poetry'" in res.output
    res = runner.invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", "task.name"])
    assert res.exit_code == 2 and "expected SECTION.FIELD=VALUE" in res.output
    assert not (tmp_path / "run").exists()


def test_set_values_are_toml_or_plain_strings() -> None:
    from rlvr.config import apply_overrides, parse_config

    data = apply_overrides(
        {},
        [
            "task.name=logic",
            "rollout.group_size=4",
            "verify.weights.logic.format=0.5",
            "update.betas=[0.9, 0.95]",
            'model.path="/m"',
        ],
    )
    cfg = parse_config(data)
    assert (cfg.task.name, cfg.rollout.group_size, cfg.update.betas, cfg.model.path) == ("logic", 4, (0.9, 0.95), "/m")
    assert cfg.verify.weights_for("logic").format == 0.5 and cfg.verify.weights_for("logic").correct == 1.0
    assert cfg.verify.weights_for("retrieval").citation == 0.5  # listing one task keeps the other defaults


def test_missing_run_is_explained(tmp_path: Path) -> None:
    for args in (["status", str(tmp_path / "x")], ["sql", str(tmp_path / "x"), "SELECT 1"], ["resume", str(tmp_path / "x")]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "no run at" in res.output and "rlvr train --run" in res.output


def test_sql_errors_and_formats(tmp_path: Path) -> None:
    from rlvr.checks.start import create_or_open

    create_or_open(tmp_path / "run", None, None)
    res = runner.invoke(app, ["sql", str(tmp_path / "run"), "DROP VIEW scores"])
    assert res.exit_code == 2 and "DROP is refused" in res.output and "read-only" in res.output
    res = runner.invoke(app, ["sql", str(tmp_path / "run"), "SELECT nope FROM scores"])
    assert res.exit_code == 2 and "DESCRIBE scores" in res.output
    res = runner.invoke(app, ["sql", str(tmp_path / "run"), "SELECT 1 AS a, 'x' AS b", "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines() == ['"a","b"', '1,"x"']
    res = runner.invoke(app, ["sql", str(tmp_path / "run"), "SELECT 1", "--format", "xml"])
    assert res.exit_code == 2 and "--format must be" in res.output


# text that rich would read as markup (or emoji): dropped (`x[i]`), a crash (`[/b]`), styled, linked
HOSTILE_CELLS = ["[/b]", "[bold red]x[/]", "x[i] + y[j]", "[link=file:///etc]a[/link]", ":smile:"]


def test_sql_table_prints_cells_and_headers_as_they_read(tmp_path: Path) -> None:
    from rlvr.checks.start import create_or_open

    create_or_open(tmp_path / "run", None, None)
    cells = ", ".join(f"'{v}' AS \"h{k}{v}\"" for k, v in enumerate(HOSTILE_CELLS))
    res = runner.invoke(app, ["sql", str(tmp_path / "run"), f"SELECT {cells}"], terminal_width=400)
    assert res.exit_code == 0, res.output
    header, row = (ln for ln in res.output.splitlines() if "[/b]" in ln)
    for k, v in enumerate(HOSTILE_CELLS):
        assert f"h{k}{v}" in header and f" {v} " in row, (v, res.output)


def test_status_and_errors_print_a_run_folder_as_it_reads(tmp_path: Path) -> None:
    from rlvr.checks.start import create_or_open

    run = tmp_path / "[bold]r[/b] x[i]"
    create_or_open(run, None, None)
    res = runner.invoke(app, ["status", str(run)], terminal_width=400)
    squeezed = "".join(res.output.split())  # the title wraps at the table's width
    assert res.exit_code == 0 and "".join(f"rlvr status {run}".split()) in squeezed, res.output
    assert "prepare" in res.output and " no " in res.output  # the styled cell still reads 'no'
    res = runner.invoke(app, ["status", str(tmp_path / "[/b]")], terminal_width=400)
    assert res.exit_code == 2 and f"no run at {tmp_path / '[/b]'}" in res.output, res.output


def test_an_internal_error_message_is_printed_as_it_reads(tmp_path: Path, monkeypatch, capsys) -> None:
    import typer
    from rlvr.flows.cli.errors import bug

    monkeypatch.setattr("rlvr.models.tiny.cache_root", lambda: tmp_path)
    with pytest.raises(typer.Exit):
        bug(RuntimeError("bad [/b] x[i]"), "runs/[bold]r[/]")
    text = capsys.readouterr().err.replace("\n", "")
    assert "internal error (RuntimeError: bad [/b] x[i])" in text and "rlvr resume runs/[bold]r[/]" in text


def test_cuda_without_cuda_is_a_user_error_before_anything_is_written(tmp_path: Path, monkeypatch) -> None:
    import torch

    from rlvr.checks.start import create_or_open

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    res = runner.invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", "update.device=cuda"])
    assert res.exit_code == 2, res.output
    assert 'update.device = "cuda" but torch.cuda.is_available() is False' in res.output and '"auto" or "cpu"' in res.output
    assert "internal error" not in res.output and not (tmp_path / "run").exists()

    # a run made where CUDA was, resumed where it is not: refused before Prefect starts, nothing added
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    create_or_open(tmp_path / "moved", Config.model_validate({"update": {"device": "cuda"}}), None)
    before = sorted(p.name for p in (tmp_path / "moved").iterdir())
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    res = runner.invoke(app, ["resume", str(tmp_path / "moved")])
    assert res.exit_code == 2 and 'update.device = "cuda"' in res.output, res.output
    assert sorted(p.name for p in (tmp_path / "moved").iterdir()) == before


def test_evaluation_without_a_held_out_split_is_refused_before_the_run_exists(tmp_path: Path) -> None:
    res = runner.invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", "eval.every=1", "--set", "task.n_test=0"])
    assert res.exit_code == 2, res.output
    assert "eval.every = 1" in res.output and "task.n_test > 0" in res.output and "eval.every = 0" in res.output
    assert "internal error" not in res.output and not (tmp_path / "run").exists()


def test_status_json_leaves_out_iterations_with_nothing_committed(tmp_path: Path) -> None:
    import json

    from rlvr.checks.start import create_or_open
    from rlvr.views.status import started_rows

    def row(i, stage, committed):
        return {"iteration": i, "stage": stage, "committed": committed}

    rows = [row("", "prepare", True), row(0, "rollout", True), row(0, "verify", False), row(0, "update", False)]
    rows += [row(1, "rollout", False), row(1, "verify", False), row(1, "update", False)]
    assert started_rows(rows) == rows[:4]  # iteration 0 has begun: its pending stages stay

    create_or_open(tmp_path / "run", None, 2)
    res = runner.invoke(app, ["status", str(tmp_path / "run"), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert [(r["iteration"], r["stage"], r["committed"]) for r in json.loads(res.output)] == [("", "prepare", False)]


COMMANDS = [
    ["train"],
    ["resume"],
    ["status"],
    ["verify-store"],
    ["sql"],
    ["import"],
    ["rescore"],
    ["serve"],
    ["worker"],
    ["report"],
    ["track"],
]
COMMANDS += [["eval"], ["export"], ["prompts"], ["config"], ["doctor"], ["models", "list"], ["models", "prepare"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_help_shows_readable_value_names_and_keeps_brackets(cmd: list[str]) -> None:
    res = runner.invoke(app, [*cmd, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    options = [ln.split() for ln in res.output.splitlines() if ln.startswith("  --")]
    assert options and all(not words[1].startswith("<") for words in options), res.output  # not typer's <int>, <bool>


def test_help_names_the_values_and_shows_brackets_as_typed() -> None:
    res = runner.invoke(app, ["train", "--help"], terminal_width=200)
    assert "[CONFIG.toml]" in res.output and "--run DIR" in res.output and "--set SECTION.FIELD=VALUE" in res.output
    res = runner.invoke(app, ["doctor", "--help"], terminal_width=200)
    assert "[rollout] engine and [update] device" in res.output, res.output  # not read as rich markup
    res = runner.invoke(app, ["sql", "x", "SELECT 1", "--max-rows", "-1"])
    assert res.exit_code == 2 and "--max-rows" in res.output


def _callbacks(typer_app) -> list:
    """Every command's callback, the `models` group's included."""
    found = [c.callback for c in typer_app.registered_commands]
    for group in typer_app.registered_groups:
        found += _callbacks(group.typer_instance)
    return found


def test_every_command_reports_user_errors_in_one_line() -> None:
    from rlvr.flows.cli.errors import user_errors

    wrapper = user_errors(lambda: None).__code__
    callbacks = _callbacks(app)
    assert len(callbacks) == len(COMMANDS)
    assert [cb.__name__ for cb in callbacks if cb.__code__ is not wrapper] == []


def test_user_errors_is_one_line_and_exit_2_and_lets_a_bug_through(capsys: pytest.CaptureFixture) -> None:
    import inspect

    import typer
    from rlvr.flows.cli.errors import user_errors

    from rlvr.errors import RlvrError

    @user_errors
    def command(exc: BaseException) -> None:
        raise exc

    for user in (RlvrError("bad field [x]; fix it"), FileNotFoundError("no such file: f")):
        with pytest.raises(typer.Exit) as e:
            command(user)
        assert e.value.exit_code == 2 and capsys.readouterr().err == f"error: {user}\n"
    with pytest.raises(KeyError):
        command(KeyError("a bug"))
    assert command.__name__ == "command" and list(inspect.signature(command).parameters) == ["exc"]  # what typer reads


@pytest.mark.parametrize(
    "args",
    [
        ["resume", "{run}"],
        ["verify-store", "{run}"],
        ["status", "{run}"],
        ["sql", "{run}", "SELECT 1"],
        ["rescore", "{run}"],
        ["report", "{run}"],
        ["track", "{run}", "--backend", "tensorboard"],
        ["eval", "{run}", "--out", "{run}-eval"],
        ["export", "{run}", "--out", "{run}-export"],
        ["serve", "{run}", "--every", "5"],
        ["prompts", "{run}"],
        ["doctor", "{run}"],
        ["models", "prepare", "no-such-model"],
    ],
    ids=lambda args: args[0] if args[0] != "models" else "models prepare",
)
def test_a_user_error_in_any_command_is_one_line_with_exit_2(tmp_path: Path, args: list[str]) -> None:
    res = runner.invoke(app, [a.format(run=tmp_path / "missing") for a in args], terminal_width=400)
    assert res.exit_code == 2 and res.output.startswith("error: ") and len(res.output.splitlines()) == 1, res.output
