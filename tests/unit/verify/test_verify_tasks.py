"""Verification of the logic and retrieval tasks, the <think>/<answer> format component and the
per-task reward composition, on hand-written rows through the real verify pass (DuckDB + the
Python tiers).

    .venv/bin/python -m pytest -q tests/unit/verify/test_verify_tasks.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.config import RewardWeights, VerifySection
from rlvr.verify import connect, logic, score_with_stats
from tests.helpers.verify_inputs import write_inputs


def _score(tmp_path: Path, problems: list[dict], responses: list[tuple[str, str]], **cfg) -> tuple[list[dict], dict]:
    table, stats = score_with_stats(*write_inputs(tmp_path, problems, responses), VerifySection(**cfg))
    return table.to_pylist(), stats


# ---- format ------------------------------------------------------------------------------

THINK_CASES = [  # (response, format_ok under 'think_answer')
    ("<think>7+12 is 19</think><answer>19</answer>", True),
    ("  <think>\nadd\n</think>\n\n<answer>19</answer>\n", True),  # whitespace around and between
    ("<answer>19</answer>", False),  # no think block
    ("<answer>19</answer><think>late</think>", False),  # wrong order
    ("<think>a</think>then<answer>19</answer>", False),  # text between the blocks
    ("<think>a</think><answer>19</answer> trailing", False),  # text after the answer
    ("<think>a</think><think>b</think><answer>19</answer>", False),  # two think blocks
    ("<think>a</think><answer>18</answer><answer>19</answer>", False),  # two answers
    ("<think>a<answer>19</answer>", False),  # unclosed think
]


def test_think_answer_format_component(tmp_path: Path) -> None:
    problems = [{"prompt_id": "n", "task": "arithmetic", "answer": "19"}]
    rows, _ = _score(
        tmp_path,
        problems,
        [("n", t) for t, _ in THINK_CASES],
        format="think_answer",
        weights={"default": RewardWeights(correct=1.0, format=0.5)},
    )
    rows.sort(key=lambda r: r["sample_idx"])
    assert [r["format_ok"] for r in rows] == [ok for _, ok in THINK_CASES]
    assert [r["reward_format"] for r in rows] == [0.5 if ok else 0.0 for _, ok in THINK_CASES]
    assert [r["reward"] for r in rows] == [r["reward_correct"] + r["reward_format"] for r in rows]
    # the answer is still extracted from the tag whatever the format: correctness is its own component
    assert rows[2]["correct"] and rows[2]["reward"] == 1.0


def test_answer_format_is_the_default(tmp_path: Path) -> None:
    problems = [{"prompt_id": "n", "task": "arithmetic", "answer": "19"}]
    rows, _ = _score(tmp_path, problems, [("n", "<answer>19</answer>"), ("n", "it is 19")])
    assert [r["format_ok"] for r in sorted(rows, key=lambda r: r["sample_idx"])] == [True, False]


# ---- logic: verdicts (SQL) ----------------------------------------------------------------

VERDICT_CASES = [  # (gold, response, correct)
    ("true", "<answer>true</answer>", True),
    ("true", "<answer>Yes.</answer>", True),
    ("true", "<answer>**TRUE**</answer>", True),
    ("true", "<answer>false</answer>", False),
    ("false", "<answer>No</answer>", True),
    ("false", "<answer>unknown</answer>", False),
    ("unknown", "<answer>Cannot be determined</answer>", True),
    ("unknown", "<answer>true</answer>", False),
    ("unknown", "<answer>maybe</answer>", False),
]


def test_logic_verdicts_are_decided_in_sql(tmp_path: Path) -> None:
    problems = [{"prompt_id": f"g{k}", "task": "logic", "answer": gold} for k, (gold, _, _) in enumerate(VERDICT_CASES)]
    rows, stats = _score(tmp_path, problems, [(f"g{k}", text) for k, (_, text, _) in enumerate(VERDICT_CASES)])
    rows.sort(key=lambda r: int(r["prompt_id"][1:]))
    assert [r["correct"] for r in rows] == [c for _, _, c in VERDICT_CASES]
    assert {r["verifier"] for r in rows} == {"sql_exact"} and stats["logic"] == 0
    assert rows[-1]["reason"] == "wrong: got maybe, expected unknown (answer true, false or unknown)"
    assert rows[1]["reason"] == "correct: yes = true"


def test_sql_verdict_table_is_rlvr_logic_table() -> None:
    """Every spelling rlvr.verify.logic knows, as norm_answer leaves it, gets the same verdict in SQL."""
    con = connect()
    spellings = [k for k, _ in logic.VERDICT_PAIRS] + ["Cannot be determined.", "**Yes**", "maybe", "no way", ""]
    spellings += ["!true", "True!", "!no", "It doesn't follow."]
    for text in spellings:
        got = con.execute("SELECT norm_verdict(norm_answer($t))", {"t": text}).fetchone()[0]
        assert got == logic.normalise_verdict(text), text


# ---- logic: formula conclusions (SQL for the gold spelling, rlvr.verify.logic for the rest) -------

PREMISES = ["P → Q", "Q → R", "P"]
FORMULA_CASES = [  # (response, correct, verifier, reason starts with)
    ("<answer>P → R</answer>", True, "sql_exact", "correct: P→R is the gold conclusion"),
    ("<answer>P->R</answer>", True, "sql_exact", "correct: P→R is the gold conclusion"),  # ASCII spelling, SQL
    ("<answer>(Q and R)</answer>", True, "logic", "correct:"),  # another valid conclusion
    ("<answer>~P</answer>", False, "logic", "wrong:"),
    ("<answer>P | ~P</answer>", False, "logic", "trivial:"),  # follows from anything
    ("<answer>__import__('os')</answer>", False, "logic", "unparsable:"),  # parsed, never run
    ("<answer>S</answer>", False, "logic", "wrong: 'S' uses S, not among the premises' variables"),  # a new variable
]


def test_logic_formula_conclusions(tmp_path: Path) -> None:
    meta = json.dumps({"kind": "propositional", "premises": PREMISES, "variables": ["P", "Q", "R"]})
    problems = [{"prompt_id": "f", "task": "logic", "answer": "P → R", "meta": meta}]
    rows, stats = _score(tmp_path, problems, [("f", text) for text, *_ in FORMULA_CASES])
    rows.sort(key=lambda r: r["sample_idx"])
    assert [r["correct"] for r in rows] == [c for _, c, _, _ in FORMULA_CASES]
    assert [r["verifier"] for r in rows] == [v for _, _, v, _ in FORMULA_CASES]
    for row, (_, _, _, start) in zip(rows, FORMULA_CASES, strict=True):
        assert row["reason"].startswith(start), row["reason"]
    assert stats["logic"] == 5 and stats["verifier_errors"] == 0
    assert [r["reward"] for r in rows] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_logic_checker_failure_marks_only_its_rows(tmp_path: Path) -> None:
    """A problem whose meta has no premises makes the checker raise: that row is a verifier_error
    left out of its group's baseline, the other problem's rows are scored."""
    good = json.dumps({"premises": PREMISES})
    problems = [
        {"prompt_id": "ok", "task": "logic", "answer": "P → R", "meta": good},
        {"prompt_id": "bad", "task": "logic", "answer": "P → R", "meta": json.dumps({"kind": "propositional"})},
    ]
    responses = [
        ("ok", "<answer>Q</answer>"),
        ("ok", "<answer>~Q</answer>"),
        ("bad", "<answer>Q</answer>"),
        ("bad", "<answer>P → R</answer>"),
    ]
    rows, stats = _score(tmp_path, problems, responses)
    by = {(r["prompt_id"], r["sample_idx"]): r for r in rows}
    assert by[("ok", 0)]["correct"] and not by[("ok", 1)]["correct"]
    bad = by[("bad", 0)]
    assert bad["verifier_error"] and bad["reason"].startswith("verifier_error: logic: KeyError") and bad["advantage"] == 0.0
    assert by[("bad", 1)]["correct"] and by[("bad", 1)]["group_size"] == 1  # baseline without the errored row
    assert stats["verifier_errors"] == 1


# ---- retrieval -----------------------------------------------------------------------------

SOURCES = [
    "Thalby was founded in 1881 by Bettan Almington. Thalby lies 237 kilometres north of Caervale.",
    "Quenmora lies 88 kilometres north of Pellmora.",
]
CITE_CASES = [  # (response, correct, citations, supported, reason contains)
    ("<cite>Thalby lies 237 kilometres north of Caervale.</cite><answer>Caervale</answer>", True, 1, 1, "all 1 found"),
    ("<cite>thalby  lies 237\nkilometres NORTH of caervale</cite> <answer> caervale </answer>", True, 1, 1, "all 1 found"),
    (
        "<cite>north of Caervale</cite><cite>Thalby lies 300 km north of Caervale</cite><answer>Caervale</answer>",
        True,
        2,
        0,
        "'north of Caervale' (shorter than 8 words and not a whole sentence), "
        "'Thalby lies 300 km north of Caervale' (not in the sources)",
    ),
    ("<cite>Thalby</cite><answer>Caervale</answer>", True, 1, 0, "'Thalby' (does not contain the answer)"),
    ("<answer>Caervale</answer>", True, 0, 0, "citations: none"),
    (
        "<cite>Quenmora lies 88 kilometres north of Pellmora.</cite><answer>Pellmora</answer>",
        False,
        1,
        0,
        "(does not contain the answer)",
    ),  # a real quote, of the wrong passage
    ("<cite></cite><answer>Caervale</answer>", True, 1, 0, "'' (not in the sources)"),
    ("<cite>Caervale</cite><answer>Caervale</answer>", True, 1, 0, "'Caervale' (the answer alone)"),
    (
        "<cite>halby lies 237 kilometres north of Caervale</cite><answer>Caervale</answer>",
        True,
        1,
        0,
        "(not in the sources)",
    ),  # starts inside a word
    (
        "<cite>Thalby was founded in 1881 by Bettan Almington</cite><answer>81</answer>",
        False,
        1,
        0,
        "(does not contain the answer)",
    ),  # '81' only inside '1881'
    (f"<cite>{SOURCES[0]}</cite><answer>Caervale</answer>", True, 1, 0, "(runs across a sentence boundary)"),
    (
        "<cite>Bettan Almington. Thalby lies 237 kilometres north of Caervale</cite><answer>Caervale</answer>",
        True,
        1,
        0,
        "(runs across a sentence boundary)",
    ),  # the right sentence padded with the end of the one before
    (
        "<cite>Thalby lies 237 kilometres north of Caervale.</cite><cite>THALBY LIES 237 kilometres north of caervale</cite>"
        "<answer>Caervale</answer>",
        True,
        2,
        1,
        "(repeats an earlier citation of the same sentence)",
    ),
]


def test_retrieval_citations_are_joined_against_the_sources(tmp_path: Path) -> None:
    problems = [{"prompt_id": "r", "task": "retrieval", "answer": "Caervale", "sources": SOURCES}]
    w = RewardWeights(correct=1.0, format=0.0, citation=0.5)
    rows, stats = _score(tmp_path, problems, [("r", t) for t, *_ in CITE_CASES], weights={"retrieval": w})
    rows.sort(key=lambda r: r["sample_idx"])
    assert stats["retrieval"] == len(CITE_CASES)
    for row, (_, correct, n, ok, why) in zip(rows, CITE_CASES, strict=True):
        assert (row["correct"], row["citations"], row["citations_supported"]) == (correct, n, ok), row["reason"]
        assert why in row["reason"], row["reason"]
        assert row["reward_citation"] == pytest.approx(0.5 * ok / n if n and correct else 0.0)  # only beside a right answer
        assert row["reward"] == pytest.approx(row["reward_correct"] + row["reward_citation"])
    assert rows[0]["reward"] == 1.5 and rows[2]["reward"] == 1.0


def test_citations_are_left_null_for_other_tasks(tmp_path: Path) -> None:
    problems = [
        {"prompt_id": "n", "task": "arithmetic", "answer": "19"},
        {"prompt_id": "r", "task": "retrieval", "answer": "Caervale", "sources": SOURCES},
    ]
    rows, _ = _score(tmp_path, problems, [("n", "<cite>x</cite><answer>19</answer>"), ("r", "<answer>Caervale</answer>")])
    by = {r["prompt_id"]: r for r in rows}
    assert by["n"]["citations"] is None and by["r"]["citations"] == 0
    assert by["r"]["reward"] == 1.0  # the default weights: retrieval's citation weight 0.5 times 0 of 0


SENTENCE_CASES = [  # (source, its sentences as cite_sentences finds them)
    ("One. Two! Three? Four", ["one.", "two!", "three?", "four"]),
    ("Dr. Marr met Mr. Hale at St. Brede. It rained.", ["dr. marr met mr. hale at st. brede.", "it rained."]),
    (
        "J.R.R. Tolkien and A. N. Other wrote, e.g. in 1937, to i.e. him.",
        ["j.r.r. tolkien and a. n. other wrote, e.g. in 1937, to i.e. him."],
    ),
    ("The river ran 3.5 metres deep. Version 2.0 followed.", ["the river ran 3.5 metres deep.", "version 2.0 followed."]),
    ('She said, "The ford is closed." Its keeper was Hale.', ['she said, "the ford is closed."', "its keeper was hale."]),
    ('"Why?" he asked. "Because." (It was late.) So', ['"why?" he asked.', '"because."', "(it was late.)", "so"]),
    ("Heading\n\nBody text\nwrapped here. Next  one.", ["heading", "body text wrapped here.", "next one."]),
    (
        "It closed in 1871. 1880 saw it reopen... Then it burned.",
        ["it closed in 1871.", "1880 saw it reopen...", "then it burned."],
    ),
    ("东京是首都。大阪很大！「好吗？」是的", ["东京是首都。", "大阪很大！", "「好吗？」", "是的"]),
    ("  ", []),
    # a full stop after an abbreviation or a letter ends a sentence before a word that opens one (red team round 9)
    (
        "It was sold to Fenn Bros. It reopened. It ran on Route B. The end.",
        ["it was sold to fenn bros.", "it reopened.", "it ran on route b.", "the end."],
    ),
    (
        "At 5 p.m. The boat left. Orla B. Fenn and J. A. Smith came.",
        ["at 5 p.m.", "the boat left.", "orla b. fenn and j. a. smith came."],
    ),
    # one fact a line; a line that goes on in lower case is wrapped text; a no-break space is a space
    (
        "Captain: Maren Colt\nPassengers: 29\nwrapped on\n  Last line",
        ["captain: maren colt", "passengers: 29 wrapped on", "last line"],
    ),
    ("One.\u00a0Two\u00a0three.", ["one.", "two three."]),
    # an ellipsis character ends a sentence as '...' does (red team round 10); before lower case it goes on
    (
        "It burned\u2026 Then it closed. He wrote \u201cshut\u2026 for now\u201d and left\u2026\u201d So",
        ["it burned\u2026", "then it closed.", 'he wrote "shut\u2026 for now" and left\u2026"', "so"],
    ),
    # typographic quotes end a sentence as straight ones do, and come out as the ASCII marks (norm_ws)
    (
        "The mayor said, \u201cWe will build 12.\u201d The keeper\u2019s log agrees. \u2018Yes.\u2019 Done",
        ['the mayor said, "we will build 12."', "the keeper's log agrees.", "'yes.'", "done"],
    ),
    # the closing marks of German and other styles end one too: „...“, »...«, ‹...›
    (
        "He said \u201eWe met 12 times.\u201c Nobody came. \u00bbIt rained.\u00ab \u2039Yes.\u203a Done",
        ['he said "we met 12 times."', "nobody came.", '"it rained."', "'yes.'", "done"],
    ),
]

WORD_CASES = [  # (text, cite_words of its norm_ws): a number is one word with its sign and the marks between its digits
    ("2.29, 29,500 and 3-5", " 2.29 29,500 and 3-5 "),
    ("at 2:29 on 12/29/1871, 1/29 of it", " at 2:29 on 12/29/1871 1/29 of it "),
    ("29 500 hands, 1\u202f000\u202f000.5 tons, 1871 200 men, 29 5000", " 29500 hands 1000000.5 tons 1871 200 men 29 5000 "),
    ("-29, (\u221229), \u201329 and 12\u221229", " -29 -29 -29 and 12\u221229 "),
    ("B-29, the 29-year-old, 2.5kg, 29th, a - 29", " b 29 the 29 year old 2.5 kg 29th a 29 "),
    # an apostrophe splits a word, whichever glyph it is (\u02bc is a letter to the regex: norm_ws folds it)
    ("keeper's, keeper\u2019s, keeper\u02bcs, \u201cWe\u201d", " keeper s keeper s keeper s we "),
]


@pytest.mark.parametrize(("text", "words"), WORD_CASES)
def test_cite_words_by_hand(text: str, words: str) -> None:
    assert connect().execute("SELECT cite_words(norm_ws($s))", {"s": text}).fetchall()[0][0] == words


@pytest.mark.parametrize(("source", "sentences"), SENTENCE_CASES)
def test_cite_sentences_by_hand(source: str, sentences: list[str]) -> None:
    assert connect().execute("SELECT cite_sentences($s)", {"s": source}).fetchall()[0][0] == sentences


def test_every_shipped_passage_splits_into_the_sentences_it_was_built_from() -> None:
    """data/generators/retrieval.py joins fact sentences (each ending in its only full stop) with spaces; the
    verifier's sentences must be exactly those, so each shipped support is one whole sentence."""
    from rlvr.data import retrieval
    from rlvr.data.generators.retrieval import normalise

    rows = retrieval.load()
    passages = sorted({p for r in rows for p in r["sources"]})
    found = connect().execute("SELECT s, cite_sentences(s) FROM unnest($p) AS t(s)", {"p": passages}).fetchall()
    for passage, sentences in found:
        assert sentences == [normalise(x) for x in passage.replace(". ", ".\n").split("\n")], passage
    by_passage = dict(found)
    for r in rows:
        meta = json.loads(r["meta"])
        assert normalise(meta["support"]) in by_passage[r["sources"][meta["passage"]]], r["prompt_id"]


def test_max_citation_words_bounds_a_span_within_one_sentence(tmp_path: Path) -> None:
    problems = [{"prompt_id": "r", "task": "retrieval", "answer": "Caervale", "sources": SOURCES}]
    cite = "<cite>Thalby lies 237 kilometres north of Caervale.</cite><answer>Caervale</answer>"  # 7 words
    rows, _ = _score(tmp_path, problems, [("r", cite)], min_citation_words=3, max_citation_words=6)
    assert rows[0]["citations_supported"] == 0 and "(longer than 6 words)" in rows[0]["reason"]
    (tmp_path / "b").mkdir()
    rows, _ = _score(tmp_path / "b", problems, [("r", cite)], min_citation_words=3, max_citation_words=7)
    assert rows[0]["citations_supported"] == 1
    with pytest.raises(ValueError, match="max_citation_words = 6 is below verify.min_citation_words = 8"):
        VerifySection(max_citation_words=6)
