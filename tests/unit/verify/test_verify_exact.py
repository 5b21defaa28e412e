"""The SQL tier's exact numeric comparison against a loop-based reference in Python fractions.

verify.sql decides a decimal answer by comparing canonical texts with the gold's exact decimal forms
(macros.sql dec_canon, rat_q20, q20_dec, dec_x100, dec_d100: computed once per problem), and leaves
fractions and repeating decimals to HUGEINT fractions (num_rat). Both must give the value equality
of `reference` below, at the edges where a shortcut could slip: integers about BIGINT's and
HUGEINT's limits, leading and trailing zeros, '-0', a % on one side, fractions with finite and
infinite expansions, exponents ('1.9e1': read exactly, the point moved in the text), and answers one
digit off.

    .venv/bin/python -m pytest -q tests/unit/verify/test_verify_exact.py
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import gcd

import pytest

from rlvr.config import VerifySection
from rlvr.verify import score
from tests.helpers.verify_inputs import write_inputs

GOLDS = [
    "0", "-0", "7", "007", "-42", "1000", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "170141183460469231731687303715884105727", "170141183460469231731687303715884105728", "1" + "0" * 40,
    "0.5", "12.25", "-0.125", "1.0000000000000000001", "3/4", "-1/2", "7/4", "1/3", "2/6", "3/6", "1/1024",
    "1/48828125", "99999999999999999/10000000000000000", "\\frac{3}{4}", "-\\dfrac{1}{2}", "12.\\overline{3}",
    "0.1\\overline{6}", "0.\\overline{9}", "50%", "12.5%", "3/4%", "0.1%", "-3/8%", "100%",
    "1e3", "2e0", "-2.5e-1", "1.0000000000000000001e20",  # scientific notation, read exactly
]  # fmt: skip

_DEC = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_SCI = re.compile(r"(-?(?:\d+\.?\d*|\.\d+))e([-+]?\d{1,3})")


def value(body: str) -> Fraction | None:
    """The exact value of a number body (no %), as the SQL tier reads it; None when it is no number."""
    if _DEC.fullmatch(body):
        return Fraction(body) if not body.endswith(".") else Fraction(body[:-1])
    if m := _SCI.fullmatch(body):
        return Fraction(m[1].removesuffix(".") or "0") * Fraction(10) ** int(m[2])
    if m := re.fullmatch(r"(-?\d+)/(0*[1-9]\d*)", body):
        return Fraction(int(m[1]), int(m[2]))
    if m := re.fullmatch(r"(-?)\\[dt]?frac\{(\d+)\}\{(0*[1-9]\d*)\}", body):
        return Fraction(int(m[2]), int(m[3])) * (-1 if m[1] else 1)
    if m := re.fullmatch(r"(-?)(\d*)\.(\d*)\\overline\{(\d+)\}", body):
        sign, i, f, r = m[1], m[2], m[3], m[4]
        n = int(i + f + r) - int("0" + i + f)
        return Fraction(n, 10 ** len(f) * (10 ** len(r) - 1)) * (-1 if sign else 1)
    return None


def open_fraction(body: str) -> bool:
    """A fraction not in lowest terms, or over 1 ('84/2', '2/6', '12/1'): a division still to be done."""
    m = re.fullmatch(r"-?(\d+)/(\d+)", body) or re.fullmatch(r"-?\\[dt]?frac\{(\d+)\}\{(\d+)\}", body)
    return m is not None and int(m[2]) != 0 and (gcd(int(m[1]), int(m[2])) != 1 or int(m[2]) == 1)


def reference(gold: str, pred: str) -> bool:
    """Equal values; a % on one side only is read both ways ('50%' = '50' and '50%' = '0.5'). As
    macros.sql norm_answer, one leading '+' and one trailing '.' are dropped first. A fraction not in
    lowest terms is no value unless the gold is written so itself (verify.sql frac_open)."""
    gold, pred = (re.sub(r"^\+|\.$", "", x) for x in (gold, pred))
    gp, pp = gold.endswith("%"), pred.endswith("%")
    g, p = value(gold.removesuffix("%")), value(pred.removesuffix("%"))
    if g is None or p is None:
        return False
    if pred.removesuffix("%") != gold.removesuffix("%") and open_fraction(pred.removesuffix("%")):
        return False
    return p == g or (pp != gp and p * (Fraction(1, 100) if pp else 1) == g * (Fraction(1, 100) if gp else 1))


def _decimal(v: Fraction, places: int) -> str | None:
    """v as a decimal with `places` digits after the point, if exact there."""
    scaled = v * 10**places
    if scaled.denominator != 1:
        return None
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    text = digits[: len(digits) - places] + ("." + digits[len(digits) - places :] if places else "")
    return ("-" if v < 0 else "") + text


def answers(gold: str) -> list[str]:
    """Renderings of the gold's value, right and one digit off, with zeros, signs, % and exponents."""
    g = value(gold.removesuffix("%"))
    if g is None:
        return ["0", "-0", "1", "2", "1000", "1000.0", "1e3", "2e0"]
    out = {gold, gold.removesuffix("%"), "-0", "0", "1e3", "1000.0"}
    for v in (g, g * 100, g / 100, g + Fraction(1, 10**20), -g):
        for places in (0, 1, 2, 3, 10, 21, 25):
            if (d := _decimal(v, places)) is not None:
                out |= {d, d + "%", "00" + d.lstrip("-"), d + "0", d[:-1] + str((int(d[-1]) + 1) % 10)}
                if "." not in d and not d.startswith("-"):
                    out |= {d + ".", "+" + d, d + "e0"}
    if g.denominator < 10**6 and abs(g.numerator) < 10**6:
        out |= {f"{g.numerator}/{g.denominator}", f"{2 * g.numerator}/{2 * g.denominator}", f"{g.numerator + 1}/{g.denominator}"}
    return sorted(a for a in out if a)


EDGES = [
    ("9223372036854775807", "9223372036854775808", False),  # BIGINT's largest, one off
    ("-9223372036854775808", "-09223372036854775808.000", True),
    ("170141183460469231731687303715884105728", "170141183460469231731687303715884105727", False),  # 2^127, one off
    ("-0", "0.000", True),
    ("0.5", "50.000000000000000000000%", True),  # % on one side, longer than a HUGEINT fraction reads
    ("1/3", "0.33333333333333333333333333333", False),  # no decimal equals a third
    ("3/4", "0.75000000000000000000000000", True),
    ("1000", "1e3", True),  # scientific notation is read exactly
    ("1000", "1.0001e3", False),
    ("9223372036854775807", "9.223372036854775807e18", True),
    ("9223372036854775807", "9.223372036854776e18", False),  # equal as DOUBLE only
    ("1" + "0" * 40, "1e40", True),
    ("1" + "0" * 40, "1e41", False),
    ("0.5", "5e-1", True),
    ("0.5", "5e-1%", True),  # % on one side: 0.5% read as 0.5 (the unit dropped)
    ("0.125", "1.25e-1", True),
    ("1000", "1e1000", False),  # an exponent of four digits is no number here
    ("12", "24/2", False),  # a division left undone (issue 19: 'What is 24 / 2?' echoed)
    ("12", "12/1", False),
    ("1/3", "2/6", False),  # not in lowest terms
    ("2/6", "2/6", True),  # the gold's own text
    ("2/6", "1/3", True),
]
CASES = list(dict.fromkeys([(gold, a) for gold in GOLDS for a in answers(gold)] + [(g, a) for g, a, _ in EDGES]))
GOLDS += [g for g, _, _ in EDGES if g not in GOLDS]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("exact")
    problems = [{"prompt_id": f"g{k:02d}", "answer": gold} for k, gold in enumerate(GOLDS)]
    pid = {gold: f"g{k:02d}" for k, gold in enumerate(GOLDS)}
    r, p = write_inputs(tmp, problems, [(pid[gold], f"<answer>{a}</answer>", 1) for gold, a in CASES])
    out = score(r, p, VerifySection()).to_pylist()
    by_key: dict[str, list[dict]] = {}
    for row in out:
        by_key.setdefault(row["prompt_id"], []).append(row)
    for v in by_key.values():
        v.sort(key=lambda x: x["sample_idx"])
    answers_of = {g: [a for gg, a in CASES if gg == g] for g in GOLDS}
    return [{**row, "gold": g, "answer": a} for g in GOLDS for row, a in zip(by_key[pid[g]], answers_of[g], strict=True)]


def test_the_cases_cover_both_verdicts_and_both_paths() -> None:
    assert len(CASES) > 1000
    assert 150 < sum(reference(g, a) for g, a in CASES) < len(CASES) - 150
    assert any("/" in a and reference(g, a) for g, a in CASES)  # fractions against decimals, both ways
    assert any(len(a) > 30 and reference(g, a) for g, a in CASES)  # answers longer than num_rat reads


def test_sql_numeric_equals_the_fraction_reference(rows: list[dict]) -> None:
    wrong = [
        (r["gold"], r["answer"], r["correct"], r["reason"]) for r in rows if r["correct"] != reference(r["gold"], r["answer"])
    ]
    assert not wrong, wrong[:20]
    assert all(r["verifier"] == "sql_numeric" for r in rows)


@pytest.mark.parametrize(("gold", "pred", "correct"), EDGES)
def test_edges(rows: list[dict], gold: str, pred: str, correct: bool) -> None:
    assert reference(gold, pred) is correct
    row = next(r for r in rows if r["gold"] == gold and r["answer"] == pred)
    assert row["correct"] is correct, row["reason"]
