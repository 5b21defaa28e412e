"""Datasets and prompts without a run: reading each format, the column aliases, answer extraction,
the held-out split, mixture proportions, templates and chat rendering, and every bad input as a
one-line error naming the file, row and column (rlvr.problems.datasets, rlvr.problems.prompts, rlvr.rollout.sampler)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from rlvr.config import Config, ConfigError, parse_config
from rlvr.errors import RlvrError
from rlvr.models.tiny import build_tokenizer
from rlvr.problems import datasets, prompts
from rlvr.problems.datasets import DatasetError
from rlvr.problems.prompts import chat_ids, chat_text
from rlvr.stages.generation import mixture_prompts
from tests.helpers import ROOT

ROWS = [{"question": f"What is {a} + {a + 1}?", "answer": f"{a} + {a + 1} = {2 * a + 1}\n#### {2 * a + 1}"} for a in range(10)]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cfg(dataset: dict, **prompt) -> Config:
    return Config.model_validate({"task": {"datasets": [dataset]}, "prompt": prompt})


def _load(dataset: dict, **prompt) -> list[dict]:
    cfg = _cfg(dataset, **prompt)
    return datasets.load_problems(cfg.task, cfg.prompt)


def test_jsonl_with_aliases_and_gsm8k_golds(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "gsm.jsonl", ROWS)
    rows = _load({"path": str(path), "answer_extract": "gsm8k"})
    assert [r["answer"] for r in sorted(rows, key=lambda r: r["prompt_id"])] == [str(2 * a + 1) for a in range(10)]
    first = next(r for r in rows if r["prompt_id"] == "gsm-000000")
    assert first["prompt"] == "What is 0 + 1?" and first["task"] == "math" and first["dataset"] == "gsm"
    assert json.loads(first["meta"]) == {"solution": ROWS[0]["answer"]}  # the working is kept
    assert sorted(r["split"] for r in rows) == ["test"] + ["train"] * 9  # test_fraction 0.1 of 10


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet_folder", "glob"])
def test_every_format_gives_the_same_rows(tmp_path: Path, fmt: str) -> None:
    records = [{"id": f"q{k}", "problem": r["question"], "target": str(2 * k + 1), "level": k % 3} for k, r in enumerate(ROWS)]
    if fmt == "json":
        path = tmp_path / "d.json"
        path.write_text(json.dumps(records))
    elif fmt == "csv":
        path = tmp_path / "d.csv"
        pacsv.write_csv(pa.Table.from_pylist(records), path)
    elif fmt == "parquet_folder":
        path = tmp_path / "d"
        path.mkdir()
        pq.write_table(pa.Table.from_pylist(records[:4]), path / "part-0.parquet")
        pq.write_table(pa.Table.from_pylist(records[4:]), path / "part-1.parquet")
    else:
        for k in range(2):
            _write_jsonl(tmp_path / f"d-{k}.jsonl", records[5 * k : 5 * k + 5])
        path = tmp_path / "d-*.jsonl"
    rows = _load({"path": str(path), "name": "d"})
    got = {r["prompt_id"]: (r["prompt"], r["answer"], json.loads(r["meta"])["level"]) for r in rows}
    assert got == {f"d-q{k}": (ROWS[k]["question"], str(2 * k + 1), k % 3 if fmt != "csv" else str(k % 3)) for k in range(10)}


def test_save_to_disk_folder_keeps_its_splits(tmp_path: Path) -> None:
    hf = pytest.importorskip("datasets")
    dd = hf.DatasetDict({"train": hf.Dataset.from_list(ROWS[:7]), "test": hf.Dataset.from_list(ROWS[7:])})
    dd.save_to_disk(str(tmp_path / "hf"))
    rows = _load({"path": str(tmp_path / "hf"), "answer_extract": "gsm8k"})
    assert sorted(r["split"] for r in rows) == ["test"] * 3 + ["train"] * 7
    assert {r["answer"] for r in rows if r["split"] == "test"} == {"15", "17", "19"}


def test_save_to_disk_without_datasets_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "dataset_info.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if not installed
    with pytest.raises(DatasetError, match=r"pip install 'rlvr\[datasets\]'"):
        _load({"path": str(folder)})


def test_answer_presets_and_regex() -> None:
    def ds(**kw):
        return Config.model_validate({"task": {"datasets": [{"path": "x.jsonl", **kw}]}}).task.datasets[0]

    assert datasets.extract_answer("so 1,000 in all\n#### 1,000", ds(answer_extract="gsm8k")) == "1000"
    assert datasets.extract_answer(r"first \boxed{2}, then \boxed{\frac{1}{2}}.", ds(answer_extract="boxed")) == r"\frac{1}{2}"
    assert datasets.extract_answer("Answer: 4. Final answer: 5", ds(answer_extract="regex", answer_regex=r"answer: (\d+)")) == "5"
    assert datasets.extract_answer("no marker", ds(answer_extract="gsm8k")) is None


def test_held_out_split_is_stable_under_row_order(tmp_path: Path) -> None:
    many = [{"id": k, "prompt": f"p{k}", "answer": str(k)} for k in range(50)]
    shuffled = many[:]
    random.Random(0).shuffle(shuffled)
    a = _load({"path": str(_write_jsonl(tmp_path / "a.jsonl", many)), "name": "x", "test_fraction": 0.2})
    b = _load({"path": str(_write_jsonl(tmp_path / "b.jsonl", shuffled)), "name": "x", "test_fraction": 0.2})

    def test(rows):
        return {r["prompt_id"] for r in rows if r["split"] == "test"}

    assert test(a) == test(b) and len(test(a)) == 10


def test_mixture_of_a_shipped_task_and_own_data_with_proportions(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "own.jsonl", [{"prompt": f"Say {k}", "answer": str(k)} for k in range(40)])
    cfg = Config.model_validate(
        {
            "task": {
                "n_train": 30,
                "n_test": 5,
                "datasets": [{"shipped": "arithmetic", "weight": 3}, {"path": str(path), "verifier": "exact", "weight": 1}],
            }
        }
    )
    rows = datasets.load_problems(cfg.task, cfg.prompt)
    by = {d: [r for r in rows if r["dataset"] == d] for d in ("arithmetic", "own")}
    assert len(by["arithmetic"]) == 35 and {r["task"] for r in by["own"]} == {"exact"}
    assert by["arithmetic"][0]["prompt"].endswith("? Put the final answer inside <answer></answer>.")  # default template
    pools = {d: [r["prompt_id"] for r in rs if r["split"] == "train"] for d, rs in by.items()}
    picks = mixture_prompts(pools, {"arithmetic": 3.0, "own": 1.0}, 16, seed=0, iteration=2)
    assert sum(p.startswith("arithmetic") for p in picks) == 12 and sum(p.startswith("own") for p in picks) == 4
    assert picks == mixture_prompts(pools, {"arithmetic": 3.0, "own": 1.0}, 16, seed=0, iteration=2)
    with pytest.raises(ConfigError, match="task.name and task.path"):
        parse_config({"task": {"name": "logic", "path": str(path)}})


def test_a_template_changes_a_shipped_instruction_without_touching_data() -> None:
    cfg = Config.model_validate(
        {"task": {"name": "logic"}, "prompt": {"template": "{prompt}\nOne word inside <answer></answer>."}}
    )
    default = Config.model_validate({"task": {"name": "logic"}})
    new, old = datasets.load_problems(cfg.task, cfg.prompt), datasets.load_problems(default.task, default.prompt)
    assert [r["prompt_id"] for r in new] == [r["prompt_id"] for r in old]
    for a, b in zip(new, old, strict=True):
        question = a["prompt"].removesuffix("\nOne word inside <answer></answer>.")
        assert question != a["prompt"] and b["prompt"] == f"{question}\n\n{json.loads(b['meta'])['instruction']}"


def test_few_shot_rows_render_token_for_token_through_the_chat_template(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "gsm.jsonl", ROWS)
    template = "{prompt}\nPut the final answer inside <answer></answer>."
    cfg = _cfg(
        {"path": str(path), "answer_extract": "gsm8k"},
        system="Be brief.",
        template=template,
        few_shot=2,
        few_shot_response="{solution}\n<answer>{answer}</answer>",
    )
    rows = datasets.load_problems(cfg.task, cfg.prompt)
    shots = sorted((r for r in rows if r["split"] == "few_shot"), key=lambda r: r["prompt_id"])
    assert len(shots) == 2
    chats = prompts.conversations(rows, cfg.prompt, "train")
    pid, chat = next(iter(chats.items()))
    source = {f"gsm-{k:06d}": r for k, r in enumerate(ROWS)}
    expected = [{"role": "system", "content": "Be brief."}]
    for s in shots:
        raw = source[s["prompt_id"]]
        expected += [
            {"role": "user", "content": raw["question"] + "\nPut the final answer inside <answer></answer>."},
            {"role": "assistant", "content": raw["answer"] + f"\n<answer>{raw['answer'].split('#### ')[1]}</answer>"},
        ]
    expected.append({"role": "user", "content": source[pid]["question"] + "\nPut the final answer inside <answer></answer>."})
    assert chat == expected
    tok = build_tokenizer([r["question"] + r["answer"] for r in ROWS])
    ids = tok.apply_chat_template(expected, add_generation_prompt=True, tokenize=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert chat_ids(tok, chat) == list(ids)
    tok.chat_template = None  # no chat template: the turns as plain text
    assert chat_text(tok, chat) == "\n\n".join(m["content"] for m in expected)
    assert chat_text(tok, "just this") == "just this"


# ---- bad input: one line naming file, row and column ------------------------------------------


def _error(tmp_path: Path, name: str, content: bytes, **dataset) -> str:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DatasetError) as info:
        _load({"path": str(path), **dataset})
    assert isinstance(info.value, RlvrError)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_bad_input_is_one_line_naming_file_row_and_column(tmp_path: Path) -> None:
    ok = b'{"question": "a?", "answer": "1"}\n'
    msg = _error(tmp_path, "m.jsonl", ok * 2, columns={"prompt": "q"})
    assert "no column 'q'" in msg and "columns.prompt" in msg and "question, answer" in msg
    msg = _error(tmp_path, "e.jsonl", ok + b'{"question": "  ", "answer": "1"}\n')
    assert "line 2, column 'question': empty prompt" in msg
    msg = _error(tmp_path, "d.jsonl", b'{"id": 7, "question": "a?", "answer": "1"}\n' * 2)
    assert "line 2, column 'id': id '7' repeats" in msg and "line 1" in msg
    msg = _error(tmp_path, "u.jsonl", ok + b'{"question": "caf\xe9?", "answer": "1"}\n')
    assert "line 2, column 'question': not UTF-8" in msg
    msg = _error(tmp_path, "u.csv", b"question,answer\na?,1\nb?,caf\xe9\n")
    assert "row 2 (line 3), column 'answer': not UTF-8" in msg
    msg = _error(tmp_path, "g.jsonl", ok.replace(b'"1"', b'"#### 1"') + ok, answer_extract="gsm8k")
    assert "line 2, column 'answer'" in msg and "'#### <answer>'" in msg
    msg = _error(tmp_path, "n.jsonl", b'{"text": "a?", "answer": "1"}\n')
    assert "no prompt column" in msg and "columns.prompt" in msg


def test_a_template_field_the_rows_lack_is_named(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "t.jsonl", ROWS[:3])
    with pytest.raises(DatasetError, match=r"prompt.template = .*no field \{hint\}"):
        _load({"path": str(path), "answer_extract": "gsm8k"}, template="{prompt} {hint}")


def test_the_guides_example_is_a_valid_config_that_loads_a_gsm8k_file(tmp_path: Path) -> None:
    """docs/guide/data.md's complete config, and the README's shorter one, load a GSM8K-style file."""
    import tomllib

    root = ROOT
    readme = (root / "README.md").read_text().split("## Your own data")[1]
    short = tomllib.loads(readme.split("```toml\n")[1].split("```")[0])
    short["task"]["datasets"][0]["path"] = str(_write_jsonl(tmp_path / "readme.jsonl", ROWS))
    assert datasets.load_problems(parse_config(short, "README.md").task, parse_config(short, "README.md").prompt)
    guide = (root / "docs" / "guide" / "data.md").read_text()
    data = tomllib.loads(guide.split("```toml\n")[1].split("```")[0])
    data["task"]["datasets"][0]["path"] = str(_write_jsonl(tmp_path / "gsm8k_train.jsonl", ROWS))
    cfg = parse_config(data, "docs/guide/data.md")
    rows = datasets.load_problems(cfg.task, cfg.prompt)
    chat = prompts.conversations(rows, cfg.prompt, "train")
    turns = next(iter(chat.values()))
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert "\n#### " in turns[2]["content"] and turns[2]["content"].endswith("</answer>")  # {solution}, then the answer


def test_exact_verifier_compares_strings_where_math_reads_numbers(tmp_path: Path) -> None:
    """verifier = 'exact' (task 'exact'): '7.0' is not '7'; the same response under 'math' is right."""
    from rlvr.config import VerifySection
    from rlvr.verify import scoring
    from tests.helpers.verify_inputs import write_inputs

    problems = [{"prompt_id": "e", "task": "exact", "answer": "7"}, {"prompt_id": "m", "task": "math", "answer": "7"}]
    responses = [(pid, text) for pid in ("e", "m") for text in ("<answer>7.0</answer>", "<answer> 7 </answer>")]
    rollouts, probs = write_inputs(tmp_path, problems, responses)
    rows = scoring.score(rollouts, probs, VerifySection(), max_new_tokens=16).to_pylist()
    got = {(r["prompt_id"], r["sample_idx"]): (r["correct"], r["verifier"]) for r in rows}
    assert got == {
        ("e", 0): (False, "sql_exact"),
        ("e", 1): (True, "sql_exact"),
        ("m", 0): (True, "sql_numeric"),
        ("m", 1): (True, "sql_numeric"),
    }


def test_set_task_path_from_the_command_line_and_a_path_in_task_name_is_pointed_there() -> None:
    from rlvr.config import apply_overrides

    cfg = parse_config(apply_overrides(Config().model_dump(mode="json", exclude_none=True), ["task.path=/data/gsm8k.jsonl"]))
    assert [d.label for d in cfg.task.sources()] == ["gsm8k"] and cfg.task.names == []
    with pytest.raises(ConfigError, match="for a file of your own, set task.path instead"):
        parse_config({"task": {"name": "/data/gsm8k.jsonl"}})


def test_rlvr_train_on_a_bad_file_fails_in_one_line_before_creating_the_run(tmp_path: Path) -> None:
    from rlvr.flows.cli import app
    from typer.testing import CliRunner

    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "a?", "answer": "1"}\n{"question": "", "answer": "2"}\n')
    res = CliRunner().invoke(app, ["train", "--run", str(tmp_path / "run"), "--set", f"task.path={path}"])
    assert res.exit_code == 2 and "line 2, column 'question': empty prompt" in res.output
    assert len(res.output.strip().splitlines()) == 1 and str(path) in res.output
    assert not (tmp_path / "run").exists()


# ---- golds the verifier can never match: refused at prepare, naming the row and the fix ----------


def test_gsm8k_working_as_the_gold_is_refused_with_the_fix(tmp_path: Path) -> None:
    """The default answer_extract = 'none' keeps the whole working as the gold: refused, not trained on."""
    ok = b'{"question": "a?", "answer": "3"}\n'
    gsm = json.dumps({"question": "b?", "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72"}).encode() + b"\n"
    msg = _error(tmp_path, "gsm8k.jsonl", ok + gsm)
    assert "dataset 'gsm8k'" in msg and "line 2, column 'answer'" in msg
    assert "did you mean answer_extract = 'gsm8k'?" in msg
    msg = _error(tmp_path, "words.jsonl", ok * 2 + gsm, verifier="exact")
    assert "line 3, column 'answer'" in msg and "answer_extract = 'gsm8k'" in msg


def test_a_boxed_solution_as_the_gold_is_refused_with_the_fix(tmp_path: Path) -> None:
    row = {"problem": "x?", "solution": "Halve 10, so the answer is $\\boxed{5}$."}
    msg = _error(tmp_path, "math.jsonl", json.dumps(row).encode() + b"\n")
    assert "line 1, column 'solution'" in msg and "did you mean answer_extract = 'boxed'?" in msg
    row = {"problem": "x?", "solution": "\\boxed{5}"}
    assert "answer_extract = 'boxed'" in _error(tmp_path, "m.jsonl", json.dumps(row).encode() + b"\n", verifier="exact")


@pytest.mark.parametrize(
    ("answer", "dataset"),
    [
        ("$", {}),
        (".", {"verifier": "exact"}),
        ("\\text{}", {}),
        ("+", {}),
        ("nan", {}),
        ("∞", {}),
        ("inf", {"verifier": "exact"}),
        ("Answer: $", {"answer_extract": "regex", "answer_regex": "Answer: (.+)"}),  # after extraction too
        ("so\n#### .", {"answer_extract": "gsm8k"}),
    ],
)
def test_a_gold_no_answer_can_equal_is_refused(tmp_path: Path, answer: str, dataset: dict) -> None:
    ok = {"regex": "Answer: 3", "gsm8k": "#### 3"}.get(dataset.get("answer_extract", ""), "3")
    rows = [{"question": "a?", "answer": ok}, {"question": "b?", "answer": answer}]
    msg = _error(tmp_path, "d.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode(), **dataset)
    assert (
        "dataset 'd'" in msg
        and "line 2, column 'answer'" in msg
        and "every response would score wrong; fix or remove the row" in msg
    )


# (gold, verifier, a response the real verifier scores correct, or None: no response can be)
GOLDS = [
    ("42", "math", "<answer>42</answer>"),
    ("1,000", "math", "<answer>1000</answer>"),
    ("Paris\nFrance", "math", "<answer>Paris France</answer>"),  # multi-line prose: compared without whitespace
    ("We have x = 2.\nThus the answer is 5.", "math", "<answer>5</answer>"),  # math-verify reads the last number
    ("inf", "math", "<answer>\\infty</answer>"),  # symbolic: math-verify matches it
    ("-", "math", "<answer>-</answer>"),
    ("x \\in [0, 1]", "math", "<answer>[0,1]</answer>"),
    ("7.0", "exact", "<answer>7.0</answer>"),
    ("$", "math", None),
    ("\\$", "math", None),
    (".", "exact", None),
    ("+", "math", None),
    ("\\text{}", "math", None),
    ("nan", "math", None),
    ("NaN", "exact", None),
    ("∞", "math", None),
    ("inf", "exact", None),
    ("Infinity", "exact", None),
]


def test_the_gold_check_agrees_with_the_verifier(tmp_path: Path) -> None:
    """A gold is refused exactly when the real verify pass scores no answer correct against it: a
    refused gold loses to its own text as the answer, an accepted one is matched by the response."""
    from rlvr.config import VerifySection
    from rlvr.verify import scoring
    from tests.helpers.verify_inputs import write_inputs

    problems = [{"prompt_id": f"p{k:02d}", "task": v, "answer": g} for k, (g, v, _) in enumerate(GOLDS)]
    responses = [(f"p{k:02d}", r or f"<answer>{g}</answer>") for k, (g, _, r) in enumerate(GOLDS)]
    rollouts, probs = write_inputs(tmp_path, problems, responses)
    correct = {
        r["prompt_id"]: r["correct"] for r in scoring.score(rollouts, probs, VerifySection(), max_new_tokens=16).to_pylist()
    }
    for k, (gold, verifier, response) in enumerate(GOLDS):
        refused = datasets.unscorable([gold], task=verifier)[0] is not None
        assert (refused, correct[f"p{k:02d}"]) == (response is None, response is not None), (gold, verifier)


def test_every_shipped_gold_passes_the_check() -> None:
    """The shipped tasks the check covers (numbers and strings: arithmetic, retrieval) and the
    GSM8K-shaped test data under answer_extract = 'gsm8k' are never refused."""
    from rlvr import data
    from rlvr.config import TaskSection
    from tests.helpers.datasets import GSM

    for name in ("arithmetic", "retrieval"):
        rows = data.one(TaskSection(name=name), name)
        assert rows and datasets.unscorable([r["answer"] for r in rows], task=rows[0]["task"]) == [None] * len(rows)
    ds = Config.model_validate({"task": {"datasets": [{"path": "x.jsonl", "answer_extract": "gsm8k"}]}}).task.datasets[0]
    for gold in [r["answer"] for r in GSM + ROWS]:
        assert datasets.working_hint(gold, ds) is None
        assert datasets.unscorable([datasets.extract_answer(gold, ds)], task="math") == [None]


def test_an_own_id_that_already_carries_the_dataset_prefix_is_not_doubled(tmp_path: Path) -> None:
    rows = [{"id": "mul-22", "prompt": "6 * 7?", "answer": "42"}, {"id": "7", "prompt": "1 + 1?", "answer": "2"}]
    got = _load({"path": str(_write_jsonl(tmp_path / "mul.jsonl", rows))})
    assert sorted(r["prompt_id"] for r in got) == ["mul-22", "mul-7"]
    # 'mul-22' and '22' would both be prompt id 'mul-22': a repeat, named
    rows.append({"id": "22", "prompt": "2 * 11?", "answer": "22"})
    msg = _error(tmp_path, "mul.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    assert "line 3, column 'id': id '22' repeats" in msg and "line 1" in msg and "'mul-22'" in msg
    # across a mixture the prefix still keeps ids apart: 'add' rows with the same own ids
    other = _write_jsonl(
        tmp_path / "add.jsonl", [{"id": "mul-22", "prompt": "p", "answer": "1"}, {"id": "x", "prompt": "q", "answer": "2"}]
    )
    cfg = Config.model_validate(
        {"task": {"datasets": [{"path": str(tmp_path / "mul.jsonl"), "name": "mul"}, {"path": str(other)}]}}
    )
    rows[2]["id"] = "8"
    _write_jsonl(tmp_path / "mul.jsonl", rows)
    ids = [r["prompt_id"] for r in datasets.load_problems(cfg.task, cfg.prompt)]
    assert sorted(ids) == ["add-mul-22", "add-x", "mul-22", "mul-7", "mul-8"]


# (task, seed, n_train, n_test, digest): sha256[:16] of json [train prompt_ids, test prompt_ids] as each
# shipped set's generate() gave them before the four copies of the split became rlvr.data.splits
SHIPPED_SPLITS = [
    ("humaneval", 0, 0, 164, "d9aa07a904b968d7"),
    ("humaneval", 1234, 131, 33, "380584a806b6054e"),
    ("humaneval", 7, 10, 5, "0b09da3b3ed21f5d"),
    ("logic", 0, 240, 60, "931608126a8851ac"),
    ("logic", 1234, 240, 60, "e036023d8d73b87b"),
    ("logic", 9, 100, 50, "a35b214a57a83fd8"),
    ("retrieval", 0, 160, 40, "e7d7d896afabbec0"),
    ("retrieval", 1234, 160, 40, "c25f39a6029a3e2b"),
    ("retrieval", 5, 20, 10, "5df85f4ecafe2665"),
    ("stdio", 0, 0, 20, "575146086bb21b8f"),
    ("stdio", 1234, 16, 4, "981bf2b54e93651d"),
    ("stdio", 3, 5, 2, "f2921cf9aad73b29"),
]


@pytest.mark.parametrize(("name", "seed", "n_train", "n_test", "digest"), SHIPPED_SPLITS)
def test_every_shipped_set_splits_by_the_one_rule_as_before(name: str, seed: int, n_train: int, n_test: int, digest: str) -> None:
    """Each fixed set's rows are exactly split_indices' choice (index i = the set's i-th problem),
    and the prompt_ids in train and test are the ones each task had before the rule was shared."""
    import hashlib
    import importlib

    from rlvr.data.splits import split_indices

    from rlvr import data

    module = importlib.import_module(f"rlvr.data.{name}")
    every = [r["prompt_id"] for r in module.generate(seed=0, n_train=0, n_test=data.size(name))]  # the set in index order
    rows = module.generate(seed=seed, n_train=n_train, n_test=n_test)
    split = split_indices(len(every), seed=seed, n_train=n_train, n_test=n_test)
    assert [(r["prompt_id"], r["split"]) for r in rows] == [(every[i], s) for i, s in split.items()]
    train, test = ([r["prompt_id"] for r in rows if r["split"] == s] for s in ("train", "test"))
    assert (len(train), len(test)) == (n_train, n_test)
    assert hashlib.sha256(json.dumps([train, test]).encode()).hexdigest()[:16] == digest


def test_split_indices_by_hand() -> None:
    """The set shuffled by the seed (random.Random), its first n_test held out, the next n_train kept;
    the rest left out; too many asked is an error naming the counts."""
    from rlvr.data.splits import split_indices

    order = list(range(6))
    random.Random(5).shuffle(order)  # the reference: one shuffle of the indices
    expected = {i: "test" for i in order[:2]} | {i: "train" for i in order[2:5]}
    assert split_indices(6, seed=5, n_train=3, n_test=2) == dict(sorted(expected.items()))
    assert list(split_indices(6, seed=5, n_train=3, n_test=2)) == sorted(expected)  # in index order
    assert split_indices(3, seed=0, n_train=0, n_test=0) == {}
    with pytest.raises(ValueError, match=r"n_train=4, n_test=3: need 0 <= n_train \+ n_test <= 6"):
        split_indices(6, seed=0, n_train=4, n_test=3)
