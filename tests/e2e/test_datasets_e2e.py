"""Your own data through real runs with the embedded tiny model (built per dataset, a short warm-up:
the mechanics are under test): each file format through one iteration (prepare -> rollout ->
verify -> update), a GSM8K-shaped JSONL with `####` golds, a system prompt and few-shot examples
trained on by editing only a TOML file (`rlvr train`), the rendered prompt ids checked token for
token against the chat template, bad input that writes nothing, and a changed source reported."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from rlvr.flows.cli import app
from transformers import AutoTokenizer
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.problems.datasets import DatasetError
from rlvr.schema import PREPARE, RunPaths
from rlvr.views.sql import run_sql
from tests.helpers.datasets import GSM

pytestmark = pytest.mark.slow

SMALL = {
    "run": {"iterations": 1},
    "model": {"tiny_warmup_steps": 5},
    "update": {"minibatches": 1},
    "rollout": {"prompts_per_iteration": 4, "group_size": 2, "max_new_tokens": 8, "engine": "transformers"},
}


def _records(n: int = 12) -> list[dict]:
    return [{"id": f"r{k}", "question": f"What is {k} + {k}?", "answer": str(2 * k)} for k in range(n)]


def _write(tmp_path: Path, fmt: str) -> Path:
    rows = _records()
    if fmt == "jsonl":
        path = tmp_path / "mine.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif fmt == "csv":
        path = tmp_path / "mine.csv"
        pacsv.write_csv(pa.Table.from_pylist(rows), path)
    elif fmt == "parquet":
        path = tmp_path / "mine"
        path.mkdir()
        for k in range(3):
            pq.write_table(pa.Table.from_pylist(rows[4 * k : 4 * k + 4]), path / f"part-{k}.parquet")
    else:
        hf = pytest.importorskip("datasets")
        path = tmp_path / "mine"
        hf.Dataset.from_list(rows).save_to_disk(str(path))
    return path


def _one_iteration(d: Path, cfg: Config) -> None:
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    stages.update(d, 0)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet", "save_to_disk"])
def test_each_format_trains_one_iteration(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path, fmt)
    d = tmp_path / "run"
    _one_iteration(d, Config.model_validate(SMALL | {"task": {"path": str(path), "datasets": []}}))
    problems = run_sql(d, "SELECT prompt_id, task, split, prompt, answer, dataset FROM problems ORDER BY 1").to_pylist()
    assert len(problems) == 12 and {p["dataset"] for p in problems} == {"mine"} and {p["task"] for p in problems} == {"math"}
    assert problems[0] | {"split": None} == {
        "prompt_id": "mine-r0",
        "task": "math",
        "split": None,
        "prompt": "What is 0 + 0?",
        "answer": "0",
        "dataset": "mine",
    }
    assert sorted(p["split"] for p in problems).count("test") == 1  # test_fraction 0.1 of 12
    scores = run_sql(d, "SELECT s.verifier, p.split FROM scores s JOIN problems p USING (prompt_id)").to_pylist()
    assert len(scores) == 4 * 2 and {s["split"] for s in scores} == {"train"}
    # the math family decides them; a symbolic response ('3+', whatever the tiny model samples) goes to math_verify
    assert {s["verifier"] for s in scores} <= {"sql_numeric", "sql_exact", "math_verify"}
    assert run_sql(d, "SELECT count(*) AS n FROM updates").to_pylist()[0]["n"] >= 1
    digests = json.loads((RunPaths(d.resolve()).record(PREPARE, None)).read_text())["extra"]["sources"]
    assert digests and all(len(h) == 64 for h in digests.values())  # every source file's sha256


def test_gsm8k_jsonl_with_system_prompt_and_few_shot_from_a_toml_file(tmp_path: Path, prefect_api: str) -> None:
    """A new user's path: their JSONL and their prompt in a TOML file, `rlvr train`, then `rlvr prompts`."""
    data = tmp_path / "gsm8k_train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in GSM), encoding="utf-8")
    toml = tmp_path / "mine.toml"
    toml.write_text(f'''
[run]
iterations = 1
[model]
tiny_warmup_steps = 5
[rollout]
engine = "transformers"
prompts_per_iteration = 4
group_size = 2
max_new_tokens = 8
[update]
minibatches = 1

[[task.datasets]]
path = "{data}"
answer_extract = "gsm8k"

[prompt]
system = "You are a careful grade-school maths tutor."
template = "{{prompt}}\\nPut the final answer inside <answer></answer>."
few_shot = 1
few_shot_response = "{{solution}}\\n<answer>{{answer}}</answer>"
''')
    d = tmp_path / "run"
    res = CliRunner().invoke(app, ["train", str(toml), "--run", str(d)])
    assert res.exit_code == 0, res.output
    problems = run_sql(d, "SELECT prompt_id, split, answer, prompt, meta FROM problems ORDER BY 1").to_pylist()
    assert [p["answer"] for p in problems] == [str(sum(map(int, r["answer"].split("#### ")[1:2]))) for r in GSM]
    assert sorted(p["split"] for p in problems) == ["few_shot", "test"] + ["train"] * 10
    assert json.loads(problems[0]["meta"]) == {"solution": GSM[0]["answer"]}
    shot = next(p for p in problems if p["split"] == "few_shot")
    k = int(shot["prompt_id"].split("-")[-1])
    instruction = "\nPut the final answer inside <answer></answer>."
    # the rollout's prompt ids are the chat template over system, the example and the question, token for token
    row = run_sql(d, "SELECT prompt_id, prompt_token_ids FROM rollouts ORDER BY prompt_id, sample_idx LIMIT 1").to_pylist()[0]
    q = int(row["prompt_id"].split("-")[-1])
    expected = [
        {"role": "system", "content": "You are a careful grade-school maths tutor."},
        {"role": "user", "content": GSM[k]["question"] + instruction},
        {"role": "assistant", "content": f"{GSM[k]['answer']}\n<answer>{GSM[k]['answer'].split('#### ')[1]}</answer>"},
        {"role": "user", "content": GSM[q]["question"] + instruction},
    ]
    tok = AutoTokenizer.from_pretrained(RunPaths(d.resolve()).policy_dir(0))
    ids = tok.apply_chat_template(expected, add_generation_prompt=True, tokenize=True)
    assert row["prompt_token_ids"] == list(ids["input_ids"] if hasattr(ids, "keys") else ids)
    assert run_sql(d, "SELECT count(*) AS n FROM updates").to_pylist()[0]["n"] >= 1
    # rlvr prompts shows that same text and its token count
    res = CliRunner().invoke(app, ["prompts", str(d), "--n", "1"])
    assert res.exit_code == 0, res.output
    first_train = min(p["prompt_id"] for p in problems if p["split"] == "train")
    first = int(first_train.split("-")[-1])
    expected[-1]["content"] = GSM[first]["question"] + instruction
    text = tok.apply_chat_template(expected, add_generation_prompt=True, tokenize=False)
    n = len(tok(text, add_special_tokens=False)["input_ids"])
    assert res.output == f"==== {first_train} (dataset gsm8k_train, train): {n} tokens ====\n{text}\n"


def test_bad_rows_fail_prepare_and_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    bad = b'{"question": "a?", "answer": "1"}\n{"question": "b?", "answer": "caf\xe9"}\n'
    path.write_bytes(bad)
    d = tmp_path / "run"
    cfg = Config.model_validate(SMALL | {"task": {"path": str(path)}})
    with pytest.raises(DatasetError, match=r"bad.jsonl, line 2, column 'answer': not UTF-8"):
        create_or_open(d, cfg, 1)  # the preflight reads the file before the run folder exists
    assert not d.exists()
    path.write_bytes(b'{"question": "a?", "answer": "1"}\n{"question": "b?", "answer": "2"}\n')
    create_or_open(d, cfg, 1)
    path.write_bytes(bad)  # the file goes bad between the start and prepare
    with pytest.raises(DatasetError, match=r"bad.jsonl, line 2, column 'answer': not UTF-8"):
        stages.prepare(d)
    paths = RunPaths(d.resolve())
    assert not paths.record(PREPARE, None).exists() and not paths.table_root("problems").exists()
    assert not paths.policy_dir(0).exists()


def test_a_source_changed_after_prepare_is_reported_and_not_used(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _write(tmp_path, "jsonl")
    d = tmp_path / "run"
    create_or_open(d, Config.model_validate(SMALL | {"task": {"path": str(path)}}), 1)
    stages.prepare(d)
    before = run_sql(d, "SELECT * FROM problems ORDER BY prompt_id")
    with caplog.at_level(logging.WARNING, logger="rlvr"):
        assert stages.prepare(d).skipped
    assert not [r for r in caplog.records if "changed" in r.getMessage()]
    path.write_text(path.read_text().replace('"answer": "0"', '"answer": "1"'), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="rlvr"):
        assert stages.prepare(d).skipped
    (warning,) = [r.getMessage() for r in caplog.records if "changed" in r.getMessage()]
    assert str(path.resolve()) in warning and "sha256" in warning and "keeps its own copy" in warning
    assert run_sql(d, "SELECT * FROM problems ORDER BY prompt_id") == before  # the run's copy, unchanged


def test_weighted_mixture_of_a_shipped_task_and_own_data(tmp_path: Path) -> None:
    """arithmetic (weight 1) + an own JSONL (weight 3, verifier exact): 8 prompts per iteration are 2 + 6,
    each scored by its own verifier."""
    path = tmp_path / "words.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"Spell {k} in digits.", "answer": str(k)}) + "\n" for k in range(20)))
    cfg = Config.model_validate(
        SMALL
        | {
            "task": {
                "n_train": 10,
                "n_test": 2,
                "datasets": [{"shipped": "arithmetic", "weight": 1}, {"path": str(path), "verifier": "exact", "weight": 3}],
            },
            "rollout": SMALL["rollout"] | {"prompts_per_iteration": 8},
        }
    )
    d = tmp_path / "run"
    create_or_open(d, cfg, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    got = run_sql(
        d,
        "SELECT p.dataset, p.task, count(DISTINCT prompt_id) AS prompts, list(DISTINCT s.verifier) AS v "
        "FROM scores s JOIN problems p USING (prompt_id) GROUP BY ALL ORDER BY 1",
    ).to_pylist()
    assert [(g["dataset"], g["task"], g["prompts"]) for g in got] == [("arithmetic", "arithmetic", 2), ("words", "exact", 6)]
    # exact never reads numbers or symbols; arithmetic's number golds go to math_verify only for a symbolic response
    assert got[1]["v"] == ["sql_exact"] and set(got[0]["v"]) <= {"sql_numeric", "math_verify"}
