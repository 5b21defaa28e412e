"""The shipped retrieval set: deterministic, answerable from its support, unambiguous, short.

Run: .venv/bin/pytest -q tests/unit/data/test_retrieval_data.py   (well under a second)
"""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pytest
from rlvr.data import retrieval
from rlvr.data.generators import retrieval as build_retrieval

from rlvr.schema import PROBLEMS


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return retrieval.load()


def test_shipped_jsonl_equals_a_fresh_build():
    built = build_retrieval.build()
    assert retrieval.PATH.read_text(encoding="utf-8") == build_retrieval.to_jsonl(built)
    assert build_retrieval.build() == built  # and building twice gives the same rows


def test_normalise_and_whole_word_count_by_hand():
    assert build_retrieval.normalise("  The\tMarket\n in  Velamora ") == "the market in velamora"
    assert build_retrieval.whole_word_count("12", "Built in 1812, rebuilt 12 years later.") == 1
    assert build_retrieval.whole_word_count("1812", "built in 1812.") == 1
    assert build_retrieval.whole_word_count("lake  ysmer", "Into Lake Ysmer; Lake Ysmerby") == 1
    assert build_retrieval.whole_word_count("Tess", "Ilsa Tesshart") == 0


def test_rows_fit_the_problems_schema(rows):
    assert len(rows) == retrieval.N_PROBLEMS
    assert [r["prompt_id"] for r in rows] == [f"retrieval-{i:05d}" for i in range(len(rows))]
    table = pa.Table.from_pylist(retrieval.generate(), schema=PROBLEMS)
    assert table.num_rows == 200
    assert set(table.column("task").to_pylist()) == {"retrieval"}
    assert len({r["prompt"] for r in rows}) == len(rows)


def test_answer_is_in_the_support_and_the_support_in_its_passage(rows):
    norm = build_retrieval.normalise
    for r in rows:
        meta = json.loads(r["meta"])
        assert set(meta) == {"support", "passage"}
        support, passage = meta["support"], r["sources"][meta["passage"]]
        assert r["answer"] and r["answer"] in support, r["prompt_id"]
        assert norm(r["answer"]) in norm(support)
        assert support in passage and norm(support) in norm(passage), r["prompt_id"]
        assert f"[{meta['passage'] + 1}] {passage}\n" in r["prompt"]


def test_answer_appears_nowhere_but_the_support(rows):
    """No distractor (nor another sentence of the same passage) holds the answer as a whole
    word, so the question has one reading; and the question names an entity of its passage."""
    for r in rows:
        meta = json.loads(r["meta"])
        hits = [build_retrieval.whole_word_count(r["answer"], s) for s in r["sources"]]
        assert hits[meta["passage"]] == 1 and sum(hits) == 1, r["prompt_id"]
        rest = r["sources"][meta["passage"]].replace(meta["support"], "")
        assert build_retrieval.whole_word_count(r["answer"], rest) == 0
        question = r["prompt"].split("Question: ")[1].split("\n")[0]
        assert build_retrieval.whole_word_count(r["answer"], question) == 0, r["prompt_id"]


def test_passages_are_short_plain_text_and_varied(rows):
    counts = {2: 0, 3: 0, 4: 0}
    for r in rows:
        counts[len(r["sources"])] += 1
        for s in r["sources"]:
            sentences = re.findall(r"[^.]+\.", s)
            assert 2 <= len(sentences) <= 4 and "".join(sentences).strip() == s, s
            # the verifier's SQL and Python normalisations agree on plain ASCII, single spaces
            assert s.isascii() and build_retrieval.normalise(s) == s.lower()
        assert len(r["prompt"].split()) <= build_retrieval.MAX_WORDS
        assert "<cite></cite>" in r["prompt"] and "<answer></answer>" in r["prompt"]
    assert min(counts.values()) >= 20
    numeric = sum(r["answer"].isdigit() for r in rows)
    assert 50 <= numeric <= 150  # years and counts, and names
    where = {json.loads(r["meta"])["passage"] for r in rows}
    assert where == {0, 1, 2, 3}


def test_splits_are_deterministic_and_disjoint():
    a = retrieval.generate(seed=1, n_train=150, n_test=50)
    assert a == retrieval.generate(seed=1, n_train=150, n_test=50)
    splits = [r["split"] for r in a]
    assert (splits.count("train"), splits.count("test")) == (150, 50)
    train = {r["prompt_id"] for r in a if r["split"] == "train"}
    test = {r["prompt_id"] for r in a if r["split"] == "test"}
    assert not train & test and len(train | test) == 200
    assert [r["split"] for r in retrieval.generate(seed=2, n_train=150, n_test=50)] != splits
    # a smaller test split is a prefix of the same shuffle, so it never leaks into train
    small = retrieval.generate(seed=1, n_train=10, n_test=20)
    assert {r["prompt_id"] for r in small if r["split"] == "test"} <= test
    assert all(r["tests"] is None for r in a)
    with pytest.raises(ValueError, match="n_train"):
        retrieval.generate(n_train=180, n_test=40)
