"""One prompt path: every consumer gives the model the same token ids for the same problem.

With a system turn and few-shot rows set, the ids that rollout sends to its engine, evaluate sends to
its engine, `rlvr import` stores, the tiny model's warm-up trains on (its own problems) and `rlvr
prompts` shows all equal the chat template applied, here by hand, to the turns the config asks for. A structural check
keeps it so: no module but rlvr/problems/prompts.py applies a chat template.

    .venv/bin/python -m pytest -q tests/integration/test_prompt_path.py
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from transformers import AutoTokenizer

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.problems.datasets import load_problems
from rlvr.rollout import engines
from rlvr.stages.ingest import import_responses
from rlvr.views.preview import preview
from rlvr.views.sql import run_sql
from tests.helpers import ROOT

SYSTEM = "You are a careful calculator."
SHOT = "{prompt}\n<answer>{answer}</answer>"
REPO = ROOT


@pytest.fixture(scope="module")
def cfg() -> Config:
    return Config.model_validate(
        {
            "run": {"iterations": 1, "seed": 3},
            "model": {"tiny_warmup_steps": 2},  # its own tiny model (the prompt differs): keep its build short
            "task": {"n_train": 24, "n_test": 6},
            "prompt": {"system": SYSTEM, "few_shot": 2, "few_shot_response": SHOT},
            "rollout": {"prompts_per_iteration": 4, "group_size": 2, "max_new_tokens": 4, "engine": "transformers"},
            "eval": {"every": 1, "prompts": 3},
        }
    )


def _expected(tok, rows: list[dict], pid: str, user: str | None = None) -> list[int]:
    """The chat template over [system, the two few-shot exchanges, the problem (or `user`)], by hand."""
    of = {r["prompt_id"]: r for r in rows}
    shots = sorted((r for r in rows if r["split"] == "few_shot"), key=lambda r: r["prompt_id"])
    assert len(shots) == 2
    turns = [{"role": "system", "content": SYSTEM}]
    for s in shots:
        turns += [
            {"role": "user", "content": s["prompt"]},
            {"role": "assistant", "content": f"{s['prompt']}\n<answer>{s['answer']}</answer>"},
        ]
    turns.append({"role": "user", "content": user if user is not None else of[pid]["prompt"]})
    ids = tok.apply_chat_template(turns, add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


class _Spy:
    """The real engine, recording the prompt ids of every request it gets."""

    def __init__(self, engine) -> None:
        self.engine, self.seen = engine, {}

    def generate(self, requests, sampling):
        for r in requests:
            self.seen[r.prompt_id] = list(r.prompt_token_ids)
        yield from self.engine.generate(requests, sampling)

    def __getattr__(self, name):
        return getattr(self.engine, name)


def test_every_consumer_renders_the_same_ids(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rlvr.models.tiny as tiny

    warmed: dict[str, list[int]] = {}
    warm_rows: list[dict] = []
    real_warmup = tiny._warmup

    def spy_warmup(model, tok, rows, prompt_ids, *args, **kw):
        warmed.update(prompt_ids)
        warm_rows.extend(rows)
        return real_warmup(model, tok, rows, prompt_ids, *args, **kw)

    monkeypatch.setenv("RLVR_CACHE", str(tmp_path / "cache"))  # a fresh cache: the warm-up runs here
    monkeypatch.setattr(tiny, "_warmup", spy_warmup)
    spies: list[_Spy] = []
    real_acquire = engines.acquire

    def spy_acquire(*args, **kw):
        got = real_acquire(*args, **kw)
        spies.append(_Spy(got.engine))
        return replace(got, engine=spies[-1])

    monkeypatch.setattr(engines, "acquire", spy_acquire)

    d = tmp_path / "run"
    create_or_open(d, cfg, None)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.evaluate(d, 0)
    rows = pq.read_table(sorted((d / "problems").glob("*.parquet"))).to_pylist()
    tok = AutoTokenizer.from_pretrained(d / "policy/v000000")
    train = [r["prompt_id"] for r in rows if r["split"] == "train"]
    test = [r["prompt_id"] for r in rows if r["split"] == "test"]

    # the tiny model's warm-up: rendered like every other prompt (system, the run's few-shot turns),
    # on problems that are none of the run's, so it never sees a training gold
    assert warm_rows and {r["question"] for r in warm_rows}.isdisjoint(r["question"] for r in rows)
    assert all(warmed[r["prompt_id"]] == _expected(tok, rows, "", user=r["prompt"]) for r in warm_rows)
    # rollout: what its engine got, and what the rollouts table stores
    rollout_seen, eval_seen = spies[0].seen, spies[1].seen
    assert rollout_seen and set(rollout_seen) <= set(train)
    assert all(ids == _expected(tok, rows, p) for p, ids in rollout_seen.items())
    stored = run_sql(d, "SELECT DISTINCT prompt_id, prompt_token_ids FROM rollouts").to_pylist()
    assert {r["prompt_id"]: list(r["prompt_token_ids"]) for r in stored} == rollout_seen
    # evaluate: the held-out problems, the same rendering
    assert eval_seen and set(eval_seen) <= set(test)
    assert all(ids == _expected(tok, rows, p) for p, ids in eval_seen.items())
    # rlvr prompts: the ids, their count, and the text they decode to
    shown = preview(d, n=len(train))
    assert [p["prompt_id"] for p in shown] == sorted(train)
    assert all(p["ids"] == _expected(tok, rows, p["prompt_id"]) and p["tokens"] == len(p["ids"]) for p in shown)
    assert shown[0]["text"].startswith("<|system|>" + SYSTEM)
    # rlvr import: a second run of the same config, a response per train problem, by id
    d2 = tmp_path / "imported"
    create_or_open(d2, cfg, None)
    f = tmp_path / "responses.jsonl"
    f.write_text("".join(json.dumps({"prompt_id": p, "response": "<answer>1</answer>"}) + "\n" for p in train))
    import_responses(d2, f)
    imported = run_sql(d2, "SELECT prompt_id, prompt_token_ids FROM rollouts").to_pylist()
    assert len(imported) == len(train)
    assert all(list(r["prompt_token_ids"]) == _expected(tok, rows, r["prompt_id"]) for r in imported)


def test_preview_of_a_config_uses_the_configured_model(cfg: Config, tmp_path: Path) -> None:
    """`rlvr prompts CONFIG` tokenises with the model the run would copy (model.path here), not the
    embedded tiny model."""
    import tomli_w

    from rlvr.models.tiny import base_model

    tiny_dir = base_model(cfg)
    toml = tmp_path / "c.toml"
    data = cfg.model_dump(mode="json", exclude_none=True)
    data["model"]["path"] = str(tiny_dir)
    toml.write_text(tomli_w.dumps(data))
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    rows = load_problems(cfg.task, cfg.prompt)
    for p in preview(toml, n=2):
        assert p["ids"] == _expected(tok, rows, p["prompt_id"])


def test_import_matches_each_kind_of_problem_text(cfg: Config, tmp_path: Path) -> None:
    """A response's `prompt` may be rlvr's user turn, the whole prompt `rlvr prompts` prints, or the
    dataset's own text before the template; each names the same problem."""
    d = tmp_path / "run"
    create_or_open(d, cfg, None)
    stages.prepare(d)
    shown = preview(d, n=1)[0]
    of = {r["prompt_id"]: r for r in run_sql(d, "SELECT prompt_id, prompt, question FROM problems").to_pylist()}
    row = of[shown["prompt_id"]]
    assert row["question"] != row["prompt"]  # the shipped template adds the instruction
    f = tmp_path / "by_text.jsonl"
    texts = [row["prompt"], shown["text"], row["question"]]
    f.write_text("".join(json.dumps({"prompt": t, "response": "<answer>1</answer>"}) + "\n" for t in texts))
    import_responses(d, f)
    got = run_sql(d, "SELECT DISTINCT prompt_id FROM rollouts").to_pylist()
    assert got == [{"prompt_id": shown["prompt_id"]}]


def test_only_rlvr_prompts_applies_a_chat_template() -> None:
    """One path: any other module calling apply_chat_template would be a second renderer."""
    offenders = []
    for folder in ("rlvr", "flows", "tasks", "data", "bench"):
        for path in (REPO / folder).rglob("*.py"):
            if path.relative_to(REPO).as_posix() != "rlvr/problems/prompts.py" and re.search(
                r"apply_chat_template", path.read_text()
            ):
                offenders.append(path.relative_to(REPO).as_posix())
    assert offenders == []
