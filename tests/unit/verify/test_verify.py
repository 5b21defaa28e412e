"""The verify SQL on hand-computed rows: extraction, normalisation, numeric vs exact, rewards,
reasons, and group advantages (checked against rlvr.train.grpo.group_advantages as a reference).
Each normalisation rule has rows that must score true and rows that must score false (RULES).

    .venv/bin/python -m pytest -q tests/unit/verify/test_verify.py
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from rlvr.config import RewardWeights, VerifySection
from rlvr.train.grpo import group_advantages
from rlvr.verify import VerifyError, score
from rlvr.verify.scoring import connect
from tests.helpers.verify_inputs import write_inputs

PROBLEMS_ROWS = [("n", "19"), ("neg", "-4"), ("big", "1200"), ("frac", "0.5"), ("word", "Paris"), ("same", "7")]

# (prompt_id, response, extracted_answer, extraction, format_ok, correct)
CASES = [
    ("n", "<answer>19</answer>", "19", "answer_tag", True, True),
    ("n", "<answer> 19. </answer>", "19.", "answer_tag", True, True),  # a value gold reads the value, trimmed
    ("n", "so \\boxed{19}", "19", "boxed", False, True),
    ("n", "it is 12 then 19", None, "none", False, False),  # no marker: strict by default (README "The answer contract")
    ("n", "<answer>18</answer> no wait 19", "18", "answer_tag", True, False),  # text after the last marker: refused
    ("n", "no idea", None, "none", False, False),
    ("n", "<answer></answer>", "", "answer_tag", True, False),
    ("neg", "<answer>−4</answer>", "−4", "answer_tag", True, True),  # unicode minus
    ("neg", "<answer>+4</answer>", "+4", "answer_tag", True, False),
    ("big", "<answer>$1,200</answer>", "$1,200", "answer_tag", True, True),
    ("big", "<answer>1200.0</answer>", "1200.0", "answer_tag", True, True),  # numeric, not textual
    ("frac", "<answer>.5</answer>", ".5", "answer_tag", True, True),
    ("word", "<answer> paris </answer>", " paris ", "answer_tag", True, True),  # exact after lower/trim
    ("word", "<answer>Lyon</answer>", "Lyon", "answer_tag", True, False),
    ("same", "<answer>7</answer>", "7", "answer_tag", True, True),
    ("same", "<answer>7</answer>", "7", "answer_tag", True, True),
]


def _files(tmp_path: Path, cases: list[tuple], problems: list[tuple] = PROBLEMS_ROWS) -> tuple[list[Path], list[Path]]:
    """cases: (prompt_id, text, ...) with an optional response length (int) right after the text."""
    responses = [(pid, text, rest[0] if rest and type(rest[0]) is int else 1) for pid, text, *rest in cases]
    return write_inputs(tmp_path, [{"prompt_id": pid, "answer": a} for pid, a in problems], responses)


@pytest.fixture()
def scored(tmp_path: Path) -> list[dict]:
    r, p = _files(tmp_path, CASES)
    out = score(r, p, VerifySection()).to_pylist()
    key = {(c[0], i): c for i, c in enumerate(CASES)}
    assert len(out) == len(key)
    return out


def test_extraction_and_comparison(scored: list[dict]) -> None:
    by_pid: dict[str, list[dict]] = {}
    for row in scored:
        by_pid.setdefault(row["prompt_id"], []).append(row)
    for pid in by_pid:
        expected = [c for c in CASES if c[0] == pid]
        got = sorted(by_pid[pid], key=lambda r: r["sample_idx"])
        for case, row in zip(expected, got, strict=True):
            _, text, extracted, extraction, format_ok, correct = case
            assert (row["extracted_answer"], row["extraction"], row["format_ok"], row["correct"]) == (
                extracted,
                extraction,
                format_ok,
                correct,
            ), text
            assert row["reward"] == (1.0 if correct else 0.0)
            # (a denied answer is decided as text: 'no wait 19' after the tag)
            assert row["verifier"] == ("sql_exact" if pid == "word" or "no wait" in text else "sql_numeric")


def test_reasons_are_readable(scored: list[dict]) -> None:
    reasons = {(r["prompt_id"], r["sample_idx"]): r["reason"] for r in scored}
    assert reasons[("n", 0)] == "correct: 19 = 19"
    assert reasons[("n", 2)] == "correct: 19 = 19 (no <answer> tag; taken from boxed)"
    assert reasons[("n", 3)].startswith("no_answer: no answer marker (<answer>, \\boxed{}, ####, a final-answer line)")
    assert reasons[("n", 4)] == "wrong: text after the last marker (the answer must end the response)"
    assert reasons[("n", 5)].startswith("no_answer:")
    assert reasons[("n", 6)] == "wrong: empty answer, expected 19"


def test_group_advantages_hand_computed(scored: list[dict]) -> None:
    n = sorted((r for r in scored if r["prompt_id"] == "n"), key=lambda r: r["sample_idx"])
    rewards = [1, 1, 1, 0, 0, 0, 0]
    mean = 3 / 7
    std = math.sqrt(sum((x - mean) ** 2 for x in rewards) / 6)  # sample std
    for row, rw in zip(n, rewards, strict=True):
        assert row["group_size"] == 7
        assert row["group_mean"] == pytest.approx(mean)
        assert row["group_std"] == pytest.approx(std)
        assert row["advantage"] == pytest.approx((rw - mean) / (std + 1e-6))
    same = [r for r in scored if r["prompt_id"] == "same"]  # all correct: no signal
    assert [r["advantage"] for r in same] == [0.0, 0.0] and same[0]["group_std"] == 0.0


def test_format_reward_adds_to_correctness(tmp_path: Path) -> None:
    r, p = _files(tmp_path, CASES[:6])
    out = score(r, p, VerifySection(weights={"default": RewardWeights(correct=1.0, format=0.25)})).to_pylist()
    out = sorted(out, key=lambda x: x["sample_idx"])
    assert [row["reward"] for row in out] == [1.25, 1.25, 1.0, 0.0, 0.25, 0.0]
    assert [row["reward_format"] for row in out] == [0.25, 0.25, 0.0, 0.0, 0.25, 0.0]
    assert [row["reward_correct"] for row in out] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert all(row["reward_citation"] == 0.0 and row["citations"] is None for row in out)


def test_weights_are_per_task(tmp_path: Path) -> None:
    """A task listed in verify.weights uses its own weights; the others use 'default'."""
    r, p = _files(tmp_path, CASES[:1])
    cfg = VerifySection(weights={"default": RewardWeights(correct=2.0), "t": RewardWeights(correct=0.5, format=0.1)})
    assert score(r, p, cfg).to_pylist()[0]["reward"] == pytest.approx(0.6)
    cfg = VerifySection(weights={"default": RewardWeights(correct=2.0), "other": RewardWeights(correct=0.5)})
    assert score(r, p, cfg).to_pylist()[0]["reward"] == pytest.approx(2.0)


@pytest.mark.parametrize("estimator", ["grpo", "dr_grpo", "rloo"])
def test_advantages_match_reference_on_random_rewards(tmp_path: Path, estimator: str) -> None:
    g = torch.Generator().manual_seed(0)
    problems = [(f"p{k}", "5") for k in range(20)]
    cases = []
    for k in range(20):
        size = int(torch.randint(1, 7, (1,), generator=g))
        for _ in range(size):
            cases.append((f"p{k}", "<answer>5</answer>" if torch.rand(1, generator=g) < 0.5 else "<answer>6</answer>"))
    r, p = _files(tmp_path, cases, problems)
    out = sorted(
        score(r, p, VerifySection(advantage=estimator)).to_pylist(), key=lambda x: (int(x["prompt_id"][1:]), x["sample_idx"])
    )
    rewards = torch.tensor([x["reward"] for x in out], dtype=torch.float64)
    group = torch.tensor([int(x["prompt_id"][1:]) for x in out])
    ref, _ = group_advantages(rewards, group, eps=1e-6, estimator=estimator)
    assert torch.allclose(torch.tensor([x["advantage"] for x in out], dtype=torch.float64), ref, atol=1e-9)


def test_rollout_for_unknown_problem_is_an_error_naming_it(tmp_path: Path) -> None:
    r, p = _files(tmp_path, [("n", "<answer>19</answer>"), ("ghost", "<answer>1</answer>")])
    with pytest.raises(VerifyError, match="ghost"):
        score(r, p, VerifySection())


# ---- normalisation rules: each with rows that must be true and rows that must be false ----------
# (rule, gold, response, correct, verifier); hand-decided from the rules in rlvr/verify/sql/macros.sql
RULES = [
    ("thousands commas", "1234567", "<answer>1,234,567</answer>", True, "sql_numeric"),
    ("thousands commas", "1200", "<answer>1,200.0</answer>", True, "sql_numeric"),
    ("thousands commas", "1,200", "<answer>1200</answer>", True, "sql_numeric"),  # commas in the gold too
    ("thousands commas", "1234", "<answer>12,34</answer>", False, "sql_numeric"),  # not a thousands group: a list
    ("thousands commas", "1200", "<answer>1,300</answer>", False, "sql_numeric"),
    ("currency", "1200", "<answer>$1,200</answer>", True, "sql_numeric"),
    ("currency", "12", "<answer>€12</answer>", True, "sql_numeric"),
    ("currency", "7.5", "<answer>£7.50</answer>", True, "sql_numeric"),
    ("currency", "5", "<answer>\\$5</answer>", True, "sql_numeric"),  # LaTeX-escaped dollar
    ("currency", "12", "<answer>$13</answer>", False, "sql_numeric"),
    ("percent", "50", "<answer>50%</answer>", True, "sql_numeric"),  # unit dropped (GSM8K style)
    ("percent", "0.5", "<answer>50%</answer>", True, "sql_numeric"),  # x/100
    ("percent", "50%", "<answer>50</answer>", True, "sql_numeric"),
    ("percent", "50%", "<answer>0.5</answer>", True, "sql_numeric"),
    ("percent", "50\\%", "<answer>50 %</answer>", True, "sql_numeric"),  # LaTeX \% on both sides
    ("percent", "50", "<answer>0.5</answer>", False, "sql_numeric"),  # no % anywhere: 0.5 is not 50
    ("percent", "50%", "<answer>5%</answer>", False, "sql_numeric"),
    ("percent", "50%", "<answer>0.5%</answer>", False, "sql_numeric"),  # % on both sides: numbers must match
    ("trailing zeros", "2.5", "<answer>2.50</answer>", True, "sql_numeric"),
    ("trailing zeros", "3", "<answer>3.0</answer>", True, "sql_numeric"),
    ("trailing zeros", "3.0", "<answer>3</answer>", True, "sql_numeric"),
    ("trailing zeros", "2.5", "<answer>2.05</answer>", False, "sql_numeric"),
    ("trailing zeros", "3", "<answer>30</answer>", False, "sql_numeric"),
    ("unicode minus", "-4", "<answer>\u22124</answer>", True, "sql_numeric"),
    ("unicode minus", "\u22124", "<answer>-4</answer>", True, "sql_numeric"),
    ("unicode minus", "-4", "<answer>4</answer>", False, "sql_numeric"),
    ("leading plus", "4", "<answer>+4</answer>", True, "sql_numeric"),
    ("leading plus", "-4", "<answer>+4</answer>", False, "sql_numeric"),
    ("fractions", "0.75", "<answer>3/4</answer>", True, "sql_numeric"),
    ("fractions", "-1/2", "<answer>-0.5</answer>", True, "sql_numeric"),
    ("fractions", "3/4", "<answer>6/8</answer>", False, "sql_numeric"),  # not in lowest terms: a division left undone (frac_open)
    ("fractions", "6/8", "<answer>6/8</answer>", True, "sql_numeric"),  # the gold written so itself
    ("fractions", "6/8", "<answer>3/4</answer>", True, "sql_numeric"),
    ("fractions", "12", "<answer>12/1</answer>", False, "sql_numeric"),
    ("fractions", "3/4", "<answer>\\frac{3}{4}</answer>", True, "sql_numeric"),
    ("fractions", "-0.5", "<answer>-\\dfrac{1}{2}</answer>", True, "sql_numeric"),
    ("fractions", "1/3", "<answer>0.3333333</answer>", False, "sql_numeric"),  # exact by default (tolerance: below)
    ("fractions", "0.75", "<answer>4/3</answer>", False, "sql_numeric"),
    ("fractions", "-1/2", "<answer>1/2</answer>", False, "sql_numeric"),
    ("fractions", "1/3", "<answer>0.333</answer>", False, "sql_numeric"),  # off by 3.3e-4
    ("exact", "42", "<answer>42.000001</answer>", False, "sql_numeric"),  # no tolerance by default
    ("exact", "1" + "0" * 199 + "7", "<answer>1" + "0" * 199 + "8</answer>", False, "sql_numeric"),  # 201 digits, one off
    ("exact", "1" + "0" * 199 + "7", "<answer>1" + "0" * 199 + "7.00</answer>", True, "sql_numeric"),
    ("exact", "-0", "<answer>0</answer>", True, "sql_numeric"),
    ("unicode digits", "42", "<answer>٤٢</answer>", True, "sql_numeric"),  # Arabic-Indic
    ("unicode digits", "42", "<answer>４２</answer>", True, "sql_numeric"),  # fullwidth
    ("unicode digits", "-3.5", "<answer>－３．５</answer>", True, "sql_numeric"),
    ("unicode digits", "42", "<answer>४३</answer>", False, "sql_numeric"),  # Devanagari 43
    ("several answers", "42", "<answer>41</answer> or <answer>42</answer>", False, "sql_exact"),  # a hedge
    ("several answers", "42", "\\boxed{41} \\boxed{42}", False, "sql_exact"),
    ("not numbers", "nan", "<answer>nan</answer>", False, "sql_exact"),  # NaN is not NaN
    ("not numbers", "inf", "<answer>inf</answer>", False, "sql_exact"),
    ("not numbers", "5", "<answer>nan</answer>", False, "sql_numeric"),  # TRY_CAST reads 'nan'; refused
    ("exponents", "1000", "<answer>1e3</answer>", True, "sql_numeric"),  # read exactly: the point moved in the text
    ("exponents", "0.25", "<answer>2.5E-1</answer>", True, "sql_numeric"),
    ("exponents", "1000", "<answer>1.0001e3</answer>", False, "sql_numeric"),
    ("not numbers", "1000", "<answer>1_000</answer>", False, "sql_numeric"),  # TRY_CAST reads '1_000'; refused
    ("exact strings", "Paris", "<answer>  PARIS </answer>", True, "sql_exact"),
    ("exact strings", "New York", "<answer>new\tyork</answer>", True, "sql_exact"),
    ("exact strings", "\\text{Paris}", "<answer>paris</answer>", True, "sql_exact"),
    ("exact strings", "Paris", "<answer>Paris, France</answer>", False, "sql_exact"),
    ("exact strings", "Paris", "<answer>sirap</answer>", False, "sql_exact"),  # never sent to math-verify
    ("exact strings", "Paris", "<answer>19</answer>", False, "sql_exact"),
    ("symbolic", "\\sqrt{2}", "<answer>\\sqrt{2}</answer>", True, "sql_exact"),  # identical text
    ("symbolic", "\\sqrt{2}", "<answer>\\sqrt 2</answer>", True, "math_verify"),
    ("symbolic", "x^2+1", "<answer>1 + x^2</answer>", True, "math_verify"),
    ("symbolic", "[1,2)", "<answer>[1, 2]</answer>", False, "sql_exact"),  # another bracket: decided before math-verify
    ("symbolic", "19", "<answer>19x</answer>", False, "sql_numeric"),  # a value gold takes a number only
    # issue 19: a value gold takes a value; a closed-form gold an answer in its shape, never arithmetic left to do
    ("value gold", "12", "<answer>3 * 4</answer>", False, "sql_numeric"),  # the question echoed
    ("value gold", "120", "<answer>\\binom{10}{3}</answer>", False, "sql_numeric"),
    ("value gold", "12", "<answer>\\sqrt{144}</answer>", False, "sql_numeric"),
    ("value gold", "-4", "<answer>5 - 9</answer>", False, "sql_numeric"),
    ("value gold", "12", "<answer>12 = 12</answer>", True, "sql_numeric"),  # an equation that holds: its last side
    ("value gold", "-4", "<answer>-4</answer>", True, "sql_numeric"),
    ("value gold", "0.5", "<answer>\\dfrac12</answer>", True, "sql_numeric"),  # \frac12 is \frac{1}{2}
    ("closed form", "2\\sqrt{3}", "<answer>\\sqrt{12}</answer>", True, "math_verify"),  # another closed form
    ("closed form", "2\\sqrt{3}", "<answer>2 \\sqrt 3</answer>", True, "math_verify"),
    ("closed form", "\\frac{\\sqrt{2}}{2}", "<answer>2^{-1/2}</answer>", True, "math_verify"),  # a power is a closed form
    ("closed form", "2\\sqrt{3}", "<answer>\\sqrt{4 \\cdot 3}</answer>", False, "sql_exact"),  # arithmetic inside
    ("closed form", "2\\sqrt{3}", "<answer>2\\sqrt{1+2}</answer>", False, "sql_exact"),
    ("closed form", "x^2+1", "<answer>x^2 + 2 - 1</answer>", False, "sql_exact"),
    ("closed form", "x^2+1", "<answer>x^2 + 1</answer>", True, "sql_exact"),
    ("closed form", "3+4i", "<answer>4i + 3</answer>", True, "math_verify"),  # 4i is a term, not 3 + 4
    ("closed form", "2\\sqrt{3}", "<answer>3.46 \\approx 2\\sqrt{3}</answer>", False, "sql_exact"),  # two values
    ("closed form", "2\\sqrt{3}", "<answer>2\\sqrt{3} = \\sqrt{12}</answer>", False, "sql_exact"),
    ("closed form", "2\\sqrt{3}", "<answer>2\\sqrt{3} \\text{ or } 3</answer>", False, "sql_exact"),
    ("repeating decimals", "37/3", "<answer>12.\\overline{3}</answer>", True, "sql_numeric"),
    ("repeating decimals", "1/6", "<answer>0.1\\overline{6}</answer>", True, "sql_numeric"),
    ("repeating decimals", "-37/3", "<answer>-12.\\overline{33}</answer>", True, "sql_numeric"),
    ("repeating decimals", "12", "<answer>12.\\overline{3}</answer>", False, "sql_numeric"),
    ("repeating decimals", "37/3", "<answer>12.\\overline{4}</answer>", False, "sql_numeric"),
    ("words", "19", "<answer>The total is 19</answer>", False, "sql_numeric"),  # words inside a marker are refused
    ("words", "19", "<answer>She has $19 left.</answer>", False, "sql_numeric"),
    ("words", "19", "<answer>x = 19</answer>", True, "sql_numeric"),
    ("words", "19", "<answer>19 or 20</answer>", False, "sql_numeric"),  # a hedge
    ("words", "19", "<answer>about 19</answer>", False, "sql_numeric"),
    ("words", "19000", "<answer>19 thousand</answer>", False, "sql_numeric"),  # a word that changes the value
    ("words", "Route 66", "<answer>Route 66</answer>", True, "sql_exact"),  # a text gold keeps its text
    ("units", "5\\text{ cm}", "<answer>5</answer>", True, "sql_numeric"),
    ("units", "5\\text{ cm}", "<answer>5 cm</answer>", True, "sql_numeric"),
    ("units", "12", "<answer>12\\text{ cm}</answer>", True, "sql_numeric"),
    ("units", "60^\\circ", "<answer>60</answer>", True, "sql_numeric"),
    ("units", "5\\text{ cm}", "<answer>6 cm</answer>", False, "sql_numeric"),
    ("exact strings", "\\text{Mount Skelt}", "<answer>Mount Skelt</answer>", True, "sql_exact"),
    ("exact strings", "Mount Skelt", "<answer>\\text{mount skelt}</answer>", True, "sql_exact"),
    ("several answers", "42", "<answer>42</answer> <answer>42</answer>", True, "sql_numeric"),  # one answer, twice
    ("several answers", "42", "\\boxed{42}, so \\boxed{42.}", True, "sql_numeric"),
    ("several answers", "42", "<think>use <answer></answer></think> <answer>42</answer>", True, "sql_numeric"),
    ("several answers", "42", "<answer>41</answer></think><answer>42</answer>", True, "sql_numeric"),  # a lone </think>
    ("markup", "12", "<answer>\\boxed{12}</answer>", True, "sql_numeric"),
    ("markup", "0.5", "<answer>\\boxed{\\frac{1}{2}}</answer>", True, "sql_numeric"),
    ("markup", "12", "<answer>\\(12\\)</answer>", True, "sql_numeric"),
    ("markup", "12", "<answer>**12**</answer>", True, "sql_numeric"),
    ("markup", "10000", "<answer>10{,}000</answer>", True, "sql_numeric"),  # MATH's thousands comma
    ("markup", "10000", "<answer>10\\,000</answer>", True, "sql_numeric"),  # a LaTeX thin space
    ("markup", "12", "<answer>\\boxed{12} or \\boxed{13}</answer>", False, "sql_exact"),
]


@pytest.fixture(scope="module")
def rule_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("rules")
    problems = [(f"r{k:02d}", gold) for k, (_, gold, *_rest) in enumerate(RULES)]
    cases = [(f"r{k:02d}", text) for k, (_, _g, text, *_rest) in enumerate(RULES)]
    r, p = _files(tmp, cases, problems)
    return score(r, p, VerifySection()).to_pylist()


@pytest.mark.parametrize("k", range(len(RULES)), ids=[f"{c[0]}: {c[1]} vs {c[2]}" for c in RULES])
def test_normalisation_rule(rule_rows: list[dict], k: int) -> None:
    rule, gold, text, correct, verifier = RULES[k]
    row = next(x for x in rule_rows if x["prompt_id"] == f"r{k:02d}")
    assert (row["correct"], row["verifier"]) == (correct, verifier), row["reason"]


PLAIN = ["42", "-3.5", "007", "0.50", "-0", "123456789012345678901234567890"]
NOT_PLAIN = ["+4", "4.", ".5", "1,200", "\u0664\u0662", "4e5", "3/4", " 42", "42 ", "--4", "4.5.6", "$4", "4%", ""]


def test_plain_decimal_is_what_norm_answer_leaves_alone() -> None:
    """verify.sql's fast path: a plain_decimal text (a gold or an answer) skips norm_answer, so
    norm_answer must leave each such text as it is; the rest are not plain and are normalised."""
    con = connect()
    for text in PLAIN + NOT_PLAIN:
        plain, normed = con.execute("SELECT plain_decimal($t), norm_answer($t)", {"t": text}).fetchone()
        assert plain == (text in PLAIN), text
        if plain:
            assert normed == text


DIGIT_GAPS = {  # text -> several numbers (digits split by spacing other than thousands groups)
    "1 2": True,
    "12 13": True,
    "10 00": True,
    "1 0 0 0": True,
    "1234 567": True,
    "1 0000": True,
    "1 000 00": True,
    "1\\,2": True,
    "1~2": True,
    "12\n13": True,
    "1 000 and 2 000 2": True,
    "1 000": False,
    "1\\,000\\,000": False,
    "12 345.5": False,
    "-1 000": False,
    "1 000 and 2 000": False,
    "12": False,
    "x 1": False,
    "12 apples": False,
    "": False,
}


def test_digit_gap_tells_several_numbers_from_thousands_groups() -> None:
    con = connect()
    got = {t: con.execute("SELECT digit_gap($t)", {"t": t}).fetchone()[0] for t in DIGIT_GAPS}
    assert got == DIGIT_GAPS


def test_numeric_tolerance_comes_from_config_and_spares_integers(tmp_path: Path) -> None:
    cases = [
        ("t", "<answer>100.9</answer>"),
        ("t", "<answer>101.5</answer>"),
        ("i", "<answer>100.9</answer>"),
        ("third", "<answer>0.3333333</answer>"),
        ("third", "<answer>0.333</answer>"),
        ("small", "<answer>0.0010000005</answer>"),
        ("small", "<answer>0.0015</answer>"),
    ]
    r, p = _files(tmp_path, cases, [("t", "100.0001"), ("i", "100"), ("third", "1/3"), ("small", "0.001")])

    def correct(cfg: VerifySection) -> list[bool]:
        rows = sorted(score(r, p, cfg).to_pylist(), key=lambda x: (x["prompt_id"], x["sample_idx"]))
        return [x["correct"] for x in rows]

    # order: i, small x2, t x2, third x2; the integer gold 100 never gets a tolerance
    assert correct(VerifySection(numeric_tolerance=0.01)) == [False, True, True, True, False, True, True]
    assert correct(VerifySection(numeric_tolerance=1e-6)) == [False, True, False, False, False, True, False]
    assert correct(VerifySection()) == [False] * 7


def test_several_answer_tags_count_the_last_when_asked(tmp_path: Path) -> None:
    r, p = _files(tmp_path, [("t", "<answer>41</answer> <answer>42</answer>"), ("t", "\\boxed{41} \\boxed{42}")], [("t", "42")])
    rows = score(r, p, VerifySection()).to_pylist()
    assert [x["correct"] for x in rows] == [False, False]
    assert rows[0]["reason"] == "wrong: markers that hold different answers (41; 42): a hedge (verify.multiple_answers = reject)"
    assert not rows[0]["format_ok"]
    rows = score(r, p, VerifySection(multiple_answers="last")).to_pylist()
    assert [x["correct"] for x in rows] == [True, True] and rows[0]["format_ok"]


# (response, extracted_answer, extraction) under verify.extraction = lenient: the extraction rules beyond
# CASES above (the contract's own tables: tests/unit/verify/test_contract.py)
EXTRACTION = [
    ("so \\boxed{\\frac{1}{2}} it is", "\\frac{1}{2}", "boxed"),  # nested braces
    ("first \\boxed{3} then \\boxed{4}", "3", "boxed"),  # the first box (the row is wrong: a hedge)
    ("\\boxed{} is empty, the answer is 7", "", "boxed"),  # a marker: the last line is not read
    ("it costs $1,200.", "$1,200", "last_number"),
    ("half of it, 3/4.", "3/4", "last_number"),
    ("the value is \u22124", "\u22124", "last_number"),
    ("that is 50%", "50%", "last_number"),
    ("that is 50% off", None, "none"),  # a word after the number that is no unit
    ("<answer>\n 5\n</answer>", "\n 5\n", "answer_tag"),  # multi-line tag body
    ("<answer>1</answer> <answer>2</answer>", "1", "answer_tag"),  # the first tag (the row is wrong: a hedge)
    ("<answer>1 <answer>2</answer>", "1 <answer>2", "answer_tag"),  # first opening, nearest closing
    ("</answer> then <answer>3</answer>", "3", "answer_tag"),
    ("<answer>no closing tag 5", None, "none"),  # an unclosed tag is no answer (not a licence to guess)
    ("\\boxed{\\frac{\\sqrt{\\frac{1}{2}}}{3}}", "\\frac{\\sqrt{\\frac{1}{2}}}{3}", "boxed"),  # three deep
    ("\\boxed{\\frac{1}{2} then 7", None, "none"),  # a box no pattern reads is no answer either
    ("<think>draft <answer>1</answer></think><answer>2</answer>", "2", "answer_tag"),  # thinking is not answering
    ("<answer></answer> <answer>5</answer>", "5", "answer_tag"),  # an empty tag beside an answer
]


def test_extraction_rules(tmp_path: Path) -> None:
    r, p = _files(tmp_path, [("x", text) for text, *_ in EXTRACTION], [("x", "0")])
    got = [(x["extracted_answer"], x["extraction"]) for x in score(r, p, VerifySection(extraction="lenient")).to_pylist()]
    assert got == [(e, kind) for _, e, kind in EXTRACTION]


def test_overlong_soft_penalty_hand_computed(tmp_path: Path) -> None:
    """DAPO eq. 13 with l_max = 16, buffer 4: free up to 12 tokens, then -1/4 per token to -1."""
    lengths = [5, 12, 13, 14, 16]
    r, p = _files(tmp_path, [("n", "<answer>19</answer>", n) for n in lengths])
    cfg = VerifySection(overlong_buffer=4, overlong_penalty=1.0)
    out = sorted(score(r, p, cfg, max_new_tokens=16).to_pylist(), key=lambda x: x["sample_idx"])
    assert [x["length_penalty"] for x in out] == pytest.approx([0.0, 0.0, -0.25, -0.5, -1.0])
    assert [x["reward"] for x in out] == pytest.approx([1.0, 1.0, 0.75, 0.5, 0.0])  # all correct, shaped by length
    assert out[0]["advantage"] > 0 > out[-1]["advantage"]  # shorter correct answers win inside the group
    off = score(r, p, cfg).to_pylist()  # no max_new_tokens: shaping off
    assert {x["length_penalty"] for x in off} == {0.0} and {x["reward"] for x in off} == {1.0}


def test_strict_extraction_needs_a_marker(tmp_path: Path) -> None:
    """verify.extraction: strict by default (only a marker is read), lenient per task or for all."""
    texts = ["<answer>42</answer>", "so \\boxed{42}", "so it is 42."]
    problems = [{"prompt_id": "a", "answer": "42", "task": "arithmetic"}, {"prompt_id": "m", "answer": "42", "task": "math"}]
    r, p = write_inputs(tmp_path, problems, [(pid, t) for pid in ("a", "m") for t in texts])

    def rows(cfg: VerifySection) -> list[tuple]:
        out = sorted(score(r, p, cfg).to_pylist(), key=lambda x: (x["prompt_id"], x["sample_idx"]))
        return [(x["prompt_id"], x["correct"], x["extraction"]) for x in out]

    lenient = [("a", True, "answer_tag"), ("a", True, "boxed"), ("a", True, "last_number")]
    strict = [*lenient[:2], ("a", False, "none")]
    assert rows(VerifySection()) == strict + [("m", *x[1:]) for x in strict]
    assert rows(VerifySection(extraction={"arithmetic": "lenient"})) == lenient + [("m", *x[1:]) for x in strict]
    assert rows(VerifySection(extraction="lenient"))[-1] == ("m", True, "last_number")
    reason = next(x["reason"] for x in score(r, p, VerifySection()).to_pylist() if x["extraction"] == "none")
    assert reason.startswith("no_answer: no answer marker (<answer>, \\boxed{}, ####, a final-answer line) in the response")
    assert reason.endswith("(verify.extraction = strict for task arithmetic)")


def test_extraction_setting_is_per_task() -> None:
    assert VerifySection().extraction == {"default": "strict"}
    assert VerifySection(extraction={"arithmetic": "lenient"}).extraction == {"default": "strict", "arithmetic": "lenient"}
    assert VerifySection(extraction="lenient").extraction == {"default": "lenient"}
    cfg = VerifySection(extraction={"math": "strict", "arithmetic": "lenient"})
    assert cfg.extraction_params() == {"strict_tasks": ["math"], "lenient_tasks": ["arithmetic"], "strict_default": True}
    with pytest.raises(ValueError, match="strict"):
        VerifySection(extraction="loose")


def test_candidates_separated_by_spaces_are_a_hedge(tmp_path: Path) -> None:
    """Lenient reading cannot be paid by listing candidates that end in the gold: no other number may share
    the last line (a computation too: '6 + 7 = 42' is refused, in doubt)."""
    texts = ["40 41 42", "40 41 42.", "maybe 41 42", "I think 42", "6 + 7 = 42"]
    r, p = write_inputs(tmp_path, [{"prompt_id": "a", "answer": "42", "task": "arithmetic"}], [("a", t) for t in texts])
    got = sorted(score(r, p, VerifySection(extraction="lenient")).to_pylist(), key=lambda x: x["sample_idx"])
    assert [x["correct"] for x in got] == [False, False, False, True, False], [x["reason"] for x in got]
