"""`rlvr eval` and `rlvr export` on a real tiny run: the evaluation equals the run's own evals, pass@k is
the unbiased estimator, the folders are whole or absent, the export loads in transformers (and vLLM,
when its venv is there) and its model card says what produced it.

One tiny run (module fixture): prepare, evaluate(0), one iteration, evaluate(1); eval.samples = 2 at
temperature 1, so the seeds matter. Refusals use run_builder's stand-in runs (no weights needed).
"""

from __future__ import annotations

import json
import re
import shutil
from math import comb
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import EVAL_FOLDER_TABLES, EVAL_RECORD, EVALUATE
from rlvr.stages.evaluation import pass_at, pass_at_k
from rlvr.store import retention
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.views.sql import run_sql
from tests.helpers.run_builder import build_run

runner = CliRunner()
EVAL = {"every": 1, "prompts": 6, "samples": 2, "temperature": 1.0}


def _config(small_config: Config, tiny_model: Path, **sections) -> Config:
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_model)
    data["run"]["iterations"] = 1
    return Config.model_validate(data | sections)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, small_config: Config, tiny_model: Path) -> Path:
    d = tmp_path_factory.mktemp("eval") / "run"
    create_or_open(d, _config(small_config, tiny_model, eval=EVAL), 1)
    stages.prepare(d)
    stages.evaluate(d, 0)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    stages.update(d, 0)
    stages.evaluate(d, 1)
    return d


def _eval(*args: object) -> dict:
    res = runner.invoke(app, ["eval", *map(str, args)], terminal_width=300)
    assert res.exit_code == 0, res.output
    return res


def _rows(folder: Path, query: str) -> list[dict]:
    return run_sql(folder, query).to_pylist()


def _no_leftovers(out: Path) -> None:
    assert not out.exists() or not any(out.iterdir())
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".tmp-{out.name}")] == []


# ---- pass@k --------------------------------------------------------------------------------


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    for n in range(1, 8):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-15), (n, c, k)
    assert pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 3, 1) == 0.75
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


def test_pass_at_averages_problems_and_counts_a_problem_without_rows_as_zero() -> None:
    rows = pa.table({"prompt_id": ["a"] * 4 + ["b"] * 4, "correct": [True, False, True, False] + [False] * 4})
    got = pass_at(rows, [1, 2, 4], problems=2)
    assert got == pytest.approx({1: 0.25, 2: (1 - 1 / 6) / 2, 4: 0.5})  # a: 2 of 4 -> 1/2, 5/6, 1; b: 0
    assert pass_at(rows, [4], problems=4) == pytest.approx({4: 0.25})


def test_new_folder_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    from rlvr.store.folders import FolderExistsError, new_folder

    out = tmp_path / "a" / "out"
    with pytest.raises(RuntimeError, match="half-way"), new_folder(out, flag="--out") as tmp:
        (tmp / "part").write_text("x")
        raise RuntimeError("half-way")
    _no_leftovers(out)
    stale = out.parent / ".tmp-out-deadbeef"  # what a killed attempt leaves: removed by the next one
    stale.mkdir()
    out.mkdir()  # an empty folder may be the target
    with new_folder(out, flag="--out") as tmp:
        (tmp / "f").write_text("done")
        assert not (out / "f").exists()  # nothing is visible before the block ends
    assert [p.name for p in out.iterdir()] == ["f"] and not stale.exists()
    with pytest.raises(FolderExistsError, match=r"--out .* not empty"), new_folder(out, flag="--out"):
        pass
    (tmp_path / "file").write_text("")
    with pytest.raises(FolderExistsError, match="is a file"), new_folder(tmp_path / "file", flag="--to"):
        pass


# ---- rlvr eval -------------------------------------------------------------------------------


@pytest.mark.slow
def test_eval_of_a_run_version_equals_the_runs_own_evals(run_dir: Path, tmp_path: Path) -> None:
    run = open_run(run_dir)
    for v in (0, 1):
        out = tmp_path / f"v{v}"
        res = _eval(run_dir, "--version", v, "--out", out)
        rec = read_record(run.paths.record(EVALUATE, v))
        assert f"accuracy {rec.extra['accuracy']:.4f} on 6 test problems" in res.output
        # response for response, verdict for verdict: the run's evals of iteration v
        theirs = _rows(run_dir, f"SELECT * FROM evals WHERE iteration = {v} ORDER BY prompt_id, sample_idx")
        assert _rows(out, "SELECT * FROM responses ORDER BY prompt_id, sample_idx") == theirs and len(theirs) == 12
        (s,) = _rows(out, "SELECT * FROM summary")
        assert s["accuracy"] == rec.extra["accuracy"] and s["reward_mean"] == pytest.approx(rec.extra["reward_mean"])
        assert (s["run"], s["policy_version"], s["config_hash"], s["split"]) == (str(run.paths.root), v, run.config_hash, "test")
        assert (s["problems"], s["samples"], s["temperature"], s["model"]) == (6, 2, 1.0, str(run.paths.policy_dir(v)))
        curve = _rows(out, "SELECT k, pass_at_k FROM pass_at_k ORDER BY k")
        assert curve == [{"k": 1, "pass_at_k": pytest.approx(s["accuracy"])}, {"k": 2, "pass_at_k": rec.extra["pass_at_2"]}]
        assert _rows(out, "SELECT count(*) AS n FROM problems JOIN responses USING (prompt_id)") == [{"n": 12}]
    # plain DuckDB reads the files as they are
    ((n,),) = duckdb.sql(f"SELECT count(*) FROM '{tmp_path / 'v1' / 'responses.parquet'}'").fetchall()
    assert n == 12
    record = json.loads((tmp_path / "v1" / EVAL_RECORD).read_text())
    assert sorted(o["path"] for o in record["outputs"]) == sorted(f"{t}.parquet" for t in EVAL_FOLDER_TABLES)
    assert record["inputs"]["version"] == 1 and record["extra"]["accuracy"] == s["accuracy"]


@pytest.mark.slow
def test_eval_of_a_model_folder_with_the_run_config_equals_evaluate_0(run_dir: Path, tmp_path: Path) -> None:
    """A model folder outside a run is sampled as a run's v0 is: the base model with the run's own
    run.toml as --config gives evaluate(0)'s responses (policy_version NULL: no run's version)."""
    out = tmp_path / "base"
    _eval("--model", run_dir / "policy" / "v000000", "--config", run_dir / "run.toml", "--out", out)
    ours = _rows(out, "SELECT * EXCLUDE (policy_version) FROM responses ORDER BY prompt_id, sample_idx")
    theirs = _rows(run_dir, "SELECT * EXCLUDE (policy_version) FROM evals WHERE iteration = 0 ORDER BY prompt_id, sample_idx")
    assert ours == theirs
    assert _rows(out, "SELECT DISTINCT policy_version FROM responses") == [{"policy_version": None}]
    assert _rows(out, "SELECT run, policy_version FROM summary") == [{"run": None, "policy_version": None}]


@pytest.mark.slow
def test_eval_without_held_out_problems_says_what_to_give(run_dir: Path, tmp_path: Path) -> None:
    args = ["eval", str(run_dir), "--set", "task.n_test=0", "--out", str(tmp_path / "e")]
    res = runner.invoke(app, args, terminal_width=400)
    assert res.exit_code == 2 and "no test problems to evaluate on (task.n_test = 0); give --split train" in res.output
    _no_leftovers(tmp_path / "e")


@pytest.mark.slow
def test_eval_pass_at_k_on_a_users_dataset(run_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {k} + {k}?", "answer": str(2 * k)}) + "\n" for k in range(10)))
    out = tmp_path / "mine"
    model = run_dir / "policy" / "v000001"
    sets = ["--set", f"task.path={data}", "--set", "rollout.engine=transformers"]
    _eval("--model", model, *sets, "--split", "train", "--prompts", 3, "--samples", 4, "--temperature", 1.0, "--out", out)
    problems = _rows(out, "SELECT prompt_id, split, dataset FROM problems ORDER BY prompt_id")
    assert len(problems) == 3 and {(p["split"], p["dataset"]) for p in problems} == {("train", "mine")}
    per = _rows(out, "SELECT prompt_id, count(*) AS n, count_if(correct)::INT AS c FROM responses GROUP BY 1 ORDER BY 1")
    assert [p["n"] for p in per] == [4, 4, 4]
    expected = {k: sum(1 - comb(4 - p["c"], k) / comb(4, k) for p in per) / 3 for k in range(1, 5)}
    curve = {r["k"]: r["pass_at_k"] for r in _rows(out, "SELECT * FROM pass_at_k")}
    assert curve == pytest.approx(expected) and list(curve.values()) == sorted(curve.values())
    (s,) = _rows(out, "SELECT accuracy, split, samples FROM summary")
    assert s == {"accuracy": pytest.approx(expected[1]), "split": "train", "samples": 4}


@pytest.mark.slow
def test_a_tampered_eval_folder_is_refused_by_rlvr_sql(run_dir: Path, tmp_path: Path) -> None:
    from rlvr.errors import RlvrError

    out = tmp_path / "e"
    _eval(run_dir, "--version", 0, "--prompts", 2, "--out", out)
    with (out / "summary.parquet").open("ab") as f:
        f.write(b"x")
    with pytest.raises(RlvrError, match=r"summary.parquet .*rlvr eval"):
        run_sql(out, "SELECT * FROM summary")


def _stand_in(tmp_path: Path):
    """A stand-in run (no weights) of 3 iterations under keep_last = 1: v1 and v2 pruned."""
    run = build_run(tmp_path / "run", {"run": {"iterations": 3}, "checkpoint": {"keep_last": 1}})
    retention.prune(run)
    return run


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{run}", "--version", "9"], r"--version 9: .* v0..v3 committed"),
        (["{run}", "--version", "1"], r"--version 1: its weights were deleted by \[checkpoint\] retention.*v0, v3"),
        (["{run}", "--model", "{run}/policy/v000000"], "a run folder .* or --model FOLDER, one of the two"),
        ([], "a run folder .* or --model FOLDER, one of the two"),
        (["{run}", "--config", "c.toml"], "--config is for --model"),
        (["--model", "{run}/policy/v000000", "--version", "0"], "--version is for a run folder"),
        (["--model", "{run}"], "no config.json there"),
        (["{run}", "--set", "prompt.system=hi"], r"--set 'prompt.system=hi': on a run, --set changes only task\."),
        (["{run}", "--split", "dev"], "--split 'dev': give test"),
    ],
    ids=["no-such-version", "pruned", "run-and-model", "neither", "config-on-run", "version-on-model", "not-hf", "set", "split"],
)
def test_eval_refusals_are_one_line_and_write_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    run = _stand_in(tmp_path)
    out = tmp_path / "out"
    res = runner.invoke(app, ["eval", *(a.format(run=run.paths.root) for a in args), "--out", str(out)], terminal_width=400)
    assert res.exit_code == 2 and len(res.output.splitlines()) == 1, res.output
    assert res.output.startswith("error: ")
    assert re.search(message, res.output), res.output
    _no_leftovers(out)


@pytest.mark.parametrize("command", ["eval", "export"])
def test_a_non_empty_out_is_refused_and_left_as_it_was(tmp_path: Path, command: str) -> None:
    run = _stand_in(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    res = runner.invoke(app, [command, str(run.paths.root), "--out", str(out)], terminal_width=400)
    assert res.exit_code == 2 and "--out" in res.output and "not empty" in res.output, res.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"] and (out / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize("command", ["eval", "export"])
def test_out_is_a_local_folder_even_for_a_run_on_object_storage(tmp_path: Path, command: str, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [command, "s3://bucket/runs/x", "--out", "s3://bucket/out"], terminal_width=400)
    assert res.exit_code == 2 and "--out is a local folder" in res.output, res.output
    assert list(tmp_path.iterdir()) == []  # no local s3:/bucket/out


# ---- rlvr export -----------------------------------------------------------------------------


@pytest.mark.slow
def test_export_is_a_clean_hf_folder_with_a_model_card(run_dir: Path, tmp_path: Path) -> None:
    import torch
    from huggingface_hub import ModelCard
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = open_run(run_dir)
    out = tmp_path / "exports" / "tiny-v1"
    res = runner.invoke(app, ["export", str(run_dir), "--version", "1", "--out", str(out)], terminal_width=300)
    assert res.exit_code == 0, res.output
    policy = run.paths.policy_dir(1)
    assert (policy / "trainer_state.pt").is_file()
    assert sorted(p.name for p in out.iterdir()) == sorted(
        {p.name for p in policy.iterdir()} - {"trainer_state.pt"} | {"README.md"}
    )
    assert (out / "generation_config.json").is_file()
    ours, theirs = AutoModelForCausalLM.from_pretrained(out), AutoModelForCausalLM.from_pretrained(policy)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    assert all(torch.equal(ours.state_dict()[k], theirs.state_dict()[k]) for k in ours.state_dict())
    text = "What is 3 + 4?"
    assert AutoTokenizer.from_pretrained(out)(text)["input_ids"] == AutoTokenizer.from_pretrained(policy)(text)["input_ids"]

    card = ModelCard.load(out / "README.md")
    evals = read_record(run.paths.record(EVALUATE, 1)).extra
    facts = card.data.to_dict()["rlvr"]
    assert facts["run"] == str(run.paths.root) and facts["config_hash"] == run.config_hash and facts["policy_version"] == 1
    assert facts["base_model"] == read_record(run.paths.record("prepare", None)).extra["base_model"]
    assert facts["held_out_accuracy"] == evals["accuracy"]
    assert card.data.eval_results[0].metric_value == evals["accuracy"] and card.data.library_name == "transformers"
    assert f"{evals['accuracy']:.4f} on 6 held-out problems" in card.text and run.config_hash in card.text
    assert [p.name for p in out.parent.iterdir()] == ["tiny-v1"]  # the temporary sibling renamed, none left


@pytest.mark.slow
def test_export_of_an_unevaluated_version_says_not_evaluated(small_config: Config, tiny_model: Path, tmp_path: Path) -> None:
    from huggingface_hub import ModelCard

    from rlvr.views.export import export_policy

    d = tmp_path / "run"
    create_or_open(d, _config(small_config, tiny_model), 1)
    stages.prepare(d)
    facts = export_policy(d, 0, tmp_path / "v0")
    card = ModelCard.load(tmp_path / "v0" / "README.md")
    assert facts["evaluation"] is None and card.data.to_dict()["rlvr"]["held_out_accuracy"] is None
    assert "held-out accuracy | not evaluated" in card.text and card.data.eval_results is None
    assert "v0: the base model as the run copied it (no training)" in card.text


def test_export_refusals_name_the_flag(tmp_path: Path) -> None:
    run = _stand_in(tmp_path)
    for version, message in (("5", r"--version 5: .* v0..v3 committed"), ("2", r"--version 2: its weights were deleted")):
        res = runner.invoke(app, ["export", str(run.paths.root), "--version", version, "--out", str(tmp_path / "x")])
        assert res.exit_code == 2 and len(res.output.splitlines()) == 1, res.output
        assert re.search(message, res.output), res.output
        _no_leftovers(tmp_path / "x")


def test_a_failed_export_leaves_no_folder(tmp_path: Path) -> None:
    """The stand-in v3 has no loadable weights: loading fails inside the temporary sibling, which goes."""
    from rlvr.views.export import export_policy

    run = _stand_in(tmp_path)
    out = tmp_path / "x"
    with pytest.raises(Exception):  # noqa: B017 (whatever transformers raises on a bogus checkpoint)
        export_policy(run.paths.root, 3, out)
    _no_leftovers(out)
    assert not out.exists()


def test_an_adapter_is_exported_only_when_merged(tmp_path: Path) -> None:
    from rlvr.views.export import ExportError, adapter_facts

    assert adapter_facts(tmp_path, 3, merge=False) is None  # full weights pass, with or without --merge
    assert adapter_facts(tmp_path, 3, merge=True) is None
    (tmp_path / "adapter_config.json").write_text('{"r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]}')
    with pytest.raises(ExportError, match="LoRA adapter.*--merge"):
        adapter_facts(tmp_path, 3, merge=False)
    assert adapter_facts(tmp_path, 3, merge=True) == {"r": 4, "alpha": 8, "target_modules": ["q_proj"], "merged": True}


@pytest.mark.slow
def test_vllm_loads_the_export_and_answers_as_transformers_does(run_dir: Path, tmp_path: Path) -> None:
    """The exported folder served by vLLM (its own venv), evaluated greedily by `rlvr eval --model`,
    gives the responses of the transformers engine on the run's version."""
    import os

    from rlvr.rollout import engines

    python = os.environ.get("RLVR_VLLM_PYTHON") or str(engines.default_vllm_venv() / "bin" / "python")
    if not (Path(python).is_file() and engines.has_vllm(python)):
        pytest.skip(f"no vLLM interpreter ({python}): run `make vllm` or set RLVR_VLLM_PYTHON")
    export = tmp_path / "export"
    assert runner.invoke(app, ["export", str(run_dir), "--version", "1", "--out", str(export)]).exit_code == 0
    greedy = ["--samples", 1, "--temperature", 0, "--prompts", 4]
    _eval(run_dir, "--version", 1, *greedy, "--out", tmp_path / "hf")
    try:
        engine = ["--set", "rollout.engine=vllm", "--set", f"rollout.python={python}"]
        _eval("--model", export, "--config", run_dir / "run.toml", *engine, *greedy, "--out", tmp_path / "vllm")
    finally:
        engines.close_all()
    q = "SELECT prompt_id, response_text, correct FROM responses ORDER BY prompt_id"
    assert _rows(tmp_path / "vllm", q) == _rows(tmp_path / "hf", q)
    assert _rows(tmp_path / "vllm", "SELECT engine FROM summary") == [{"engine": "vllm"}]
    shutil.rmtree(export)


@pytest.mark.slow
def test_eval_and_export_of_a_run_on_object_storage(s3_uri: str, small_config: Config, tiny_model: Path, tmp_path: Path) -> None:
    """An s3:// run (moto on 127.0.0.1): its version fetched through the store, checked, evaluated and
    exported like a local run's; the results name the run by its URI."""
    from huggingface_hub import ModelCard

    create_or_open(s3_uri, _config(small_config, tiny_model, eval={"every": 1, "prompts": 3}), 1)
    stages.prepare(s3_uri)
    stages.evaluate(s3_uri, 0)
    _eval(s3_uri, "--version", 0, "--out", tmp_path / "e")
    q = "SELECT * FROM {} ORDER BY prompt_id, sample_idx"
    assert _rows(tmp_path / "e", q.format("responses")) == _rows(s3_uri, q.format("evals")) != []
    assert _rows(tmp_path / "e", "SELECT run, policy_version FROM summary") == [{"run": s3_uri, "policy_version": 0}]
    res = runner.invoke(app, ["export", s3_uri, "--version", "0", "--out", str(tmp_path / "x")], terminal_width=300)
    assert res.exit_code == 0, res.output
    facts = ModelCard.load(tmp_path / "x" / "README.md").data.to_dict()["rlvr"]
    assert (
        facts["run"] == s3_uri
        and facts["held_out_accuracy"] == read_record(open_run(s3_uri).paths.record(EVALUATE, 0)).extra["accuracy"]
    )
    assert (tmp_path / "x" / "model.safetensors").is_file() and not (tmp_path / "x" / "trainer_state.pt").exists()
