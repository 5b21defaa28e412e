"""The normalisation macros (rlvr/verify/sql/normalise.sql, and norm_digits and norm_verdict, which
rlvr.verify.scoring.digits_macro and verdict_macro make in Python), each called directly by one table:
arguments -> the value the macro returns; the case names are the test ids. The expected values follow each
macro's comment in the .sql file, its contract.

    .venv/bin/python -m pytest -q tests/unit/verify/sql/test_normalise.py
"""

from __future__ import annotations

import pytest

from rlvr.verify.scoring import connect

# A single argument is given as itself, several as a tuple; a struct ({n, d} fractions) is a dict.
MACROS = {
    "norm_latex": [
        ("text-unit", r"5\text{ cm}", "5  cm "),
        ("box-in-a-box-unbraced-frac", r"\boxed{\boxed{\frac12}}", r"\frac{1}{2}"),
        ("display-math", r"\[7\]", "  7  "),
        ("bold", "**42**", "42"),
        ("interval-kept", "(0, 1)", "(0, 1)"),
        ("left-right", r"\left(1, 2\right)", " (1, 2 )"),
        ("tilde-before-word-not-number", "~13~cm", "~13 cm"),
        ("variants", r"\varnothing \varepsilon", r"\emptyset \epsilon"),
    ],
    "norm_cased": [
        ("text-unit", r"5\text{ cm}", "5cm"),
        ("case-kept", "X = 5", "X=5"),
        ("currency-and-braced-comma", r"\$1{,}000", "1,000"),
        ("unicode-minus-and-percent", r"−5\%", "-5%"),
        ("leading-equals", "= 7", "7"),
        ("trailing-full-stop", "42.", "42"),
        ("degrees", r"90^\circ", "90"),
        ("minus-in-numerator", r"\frac{-3}{4}", r"-\frac{3}{4}"),
    ],
    "norm_answer": [
        ("lower-case", "Yes", "yes"),
        ("text-word", r"\text{Paris}", "paris"),
        ("boxed-unbraced-frac", r"\boxed{\dfrac12}", r"\dfrac{1}{2}"),
        ("equation", "x = 5", "x=5"),
        ("leading-equals", "= 5", "5"),
        ("currency-thousands", r"\$1{,}234.50", "1,234.50"),
        ("fullwidth-digit", "５", "5"),
        ("minus-in-dfrac", r"\dfrac{-1}{2}", r"-\dfrac{1}{2}"),
    ],
    "norm_plain": [
        ("dollar", "$1,234.50", "1,234.50"),
        ("euro", "€12", "12"),
        ("pound-full-stop", "£7.", "7"),
        ("unicode-minus", "−5", "-5"),
        ("leading-plus", "+5", "5"),
        ("percent-kept", "50%", "50%"),
        ("trailing-comma", "12,", "12"),
        ("fraction", "3/4", "3/4"),
    ],
    "plain_decimal": [
        ("integer", "42", True),
        ("negative-decimal", "-3.5", True),
        ("leading-zeros", "007", True),
        ("point-without-digits", "1.", False),
        ("no-integer-part", ".5", False),
        ("plus", "+5", False),
        ("thousands", "1,000", False),
        ("fraction", "3/4", False),
    ],
    "digit_gap": [
        ("two-digits", "1 2", True),
        ("not-a-group", "10 00", True),
        ("tilde", "1~2", True),
        ("four-digits-before-group", "1000 000", True),
        ("digit-after-group", "1 000 2", True),
        ("thousands-group", "1 000", False),
        ("latex-groups", r"1\,000\,000", False),
        ("one-number", "12", False),
    ],
    "num_body": [
        ("thousands-group", "1,000", "1000"),
        ("groups-and-decimals", "1,234.5", "1234.5"),
        ("percent-and-group", "1,000%", "1000"),
        ("percent", "50%", "50"),
        ("decimal-comma", "1,2", "1,2"),
        ("leading-zero-group", "0,012", "0,012"),
        ("short-group", "1,00", "1,00"),
        ("plain", "12", "12"),
    ],
    "num_value": [
        ("negative-decimal", "-3.5", -3.5),
        ("exponent", "1e3", 1000.0),
        ("denominator-leading-zero", "3/04", 0.75),
        ("negative-dfrac", r"-\dfrac{1}{2}", -0.5),
        ("repeating", r"0.\overline{3}", 1 / 3),
        ("inf-read", "inf", float("inf")),
        ("zero-denominator", "1/0", None),
        ("underscore", "1_000", None),
    ],
    "dec_parts": [
        ("zeros-both-ends", (False, "0042", "50"), "42.5"),
        ("negative-zero", (True, "0", "0"), "0"),
        ("negative-integer", (True, "3", ""), "-3"),
        ("no-integer-part", (False, "", "5"), "0.5"),
        ("nothing", (True, "", ""), "0"),
        ("zero-fraction", (False, "100", "000"), "100"),
    ],
    "dec_canon": [
        ("zeros-both-ends", "-0042.50", "-42.5"),
        ("negative-zero", "-0", "0"),
        ("no-integer-part", ".5", "0.5"),
        ("trailing-point", "5.", "5"),
        ("all-zero", "0.000", "0"),
        ("long", "12345678901234567890.1", "12345678901234567890.1"),
        ("exponent", "1e3", None),
        ("fraction", "1/2", None),
    ],
    "sci_parts": [
        ("point-right", ("", "1", "9", 1), "19"),
        ("point-left", ("-", "2", "5", -1), "-0.25"),
        ("zeros-added", ("", "1", "", 3), "1000"),
        ("point-inside", ("", "12", "34", 1), "123.4"),
        ("zeros-after-point", ("", "1", "", -3), "0.001"),
    ],
    "sci_dec": [
        ("positive-exponent", "1.9e1", "19"),
        ("negative-exponent", "-2.5e-1", "-0.25"),
        ("plus-exponent", "1e+3", "1000"),
        ("small", "0.5e-2", "0.005"),
        ("no-double", "1e200", "1" + "0" * 200),
        ("four-digit-exponent", "1e1000", "1e1000"),
        ("no-exponent-digits", "1.5e", "1.5e"),
        ("plain", "42", "42"),
    ],
    "rep_rat": [
        ("third", {"s": "", "i": "0", "f": "", "r": "3"}, {"n": 3, "d": 9}),
        ("sixth", {"s": "", "i": "0", "f": "1", "r": "6"}, {"n": 15, "d": 90}),
        ("negative-eight-sevenths", {"s": "-", "i": "1", "f": "", "r": "142857"}, {"n": -1142856, "d": 999999}),
        ("no-integer-digits", {"s": "", "i": "", "f": "", "r": "9"}, {"n": 9, "d": 9}),
    ],
    "rep_notation": [
        ("bar", r"0.\bar{3}", r"0.\overline{3}"),
        ("dot", r"0.1\dot{6}", r"0.1\overline{6}"),
        ("parentheses", "0.(3)", r"0.\overline{3}"),
        ("three-dots", "0.333...", r"0.\overline{3}"),
        ("ellipsis-after-digits", "0.1666…", r"0.1\overline{6}"),
        ("digit-twice", "0.33...", "0.33..."),
        ("no-dots", "0.333", "0.333"),
        ("parentheses-without-point", "2(3)", "2(3)"),
    ],
    "num_rat": [
        ("decimal", "0.25", {"n": 25, "d": 100}),
        ("seventeen-characters", "123456789012345.5", {"n": 1234567890123455, "d": 10}),
        ("eighteen-characters", "1234567890123456.5", None),
        ("slash", "-3/4", {"n": -3, "d": 4}),
        ("frac", r"-\frac{3}{4}", {"n": -3, "d": 4}),
        ("mixed-number", r"2\frac{1}{3}", {"n": 7, "d": 3}),
        ("mixed-improper", r"2\frac{4}{3}", None),
        ("repeating", r"0.1\overline{6}", {"n": 15, "d": 90}),
    ],
    "rat_pct": [
        ("percent", ({"n": 3, "d": 4}, True), {"n": 3, "d": 400}),
        ("no-percent", ({"n": 3, "d": 4}, False), {"n": 3, "d": 4}),
        ("negative", ({"n": -1, "d": 2}, True), {"n": -1, "d": 200}),
    ],
    "rat_eq": [
        ("equal-unreduced", ({"n": 1, "d": 2}, {"n": 2, "d": 4}), True),
        ("zeros", ({"n": 0, "d": 1}, {"n": 0, "d": 5}), True),
        ("different", ({"n": 1, "d": 2}, {"n": 1, "d": 3}), False),
        ("sign", ({"n": -1, "d": 2}, {"n": 1, "d": 2}), False),
    ],
    "rat_q20": [
        ("quarter", (1, 4), 25 * 10**18),
        ("unreduced", (2, 4), 5 * 10**19),
        ("negative", (-1, 8), -125 * 10**17),
        ("integer", (3, 1), 3 * 10**20),
        ("twenty-places", (1, 2**20), 95367431640625),
        ("repeating", (1, 3), None),
        ("over-twenty-places", (1, 2**21), None),
    ],
    "q20_dec": [
        ("quarter", 25 * 10**18, "0.25"),
        ("integer", 3 * 10**20, "3"),
        ("negative", -125 * 10**17, "-0.125"),
        ("mixed", 123456 * 10**20 + 5 * 10**19, "123456.5"),
        ("last-place", 1, "0.00000000000000000001"),
        ("zero", 0, "0"),
        ("null", None, None),
    ],
    "rat_repeats": [
        ("third", (1, 3), True),
        ("quarter", (1, 4), False),
        ("reduces-to-half", (3, 6), False),
        ("zero", (0, 3), False),
        ("power-of-two-in", (1, 2**56), False),
        ("power-of-two-out", (1, 2**57), True),
        ("power-of-five-in", (1, 5**24), False),
        ("power-of-five-out", (1, 5**25), True),
    ],
    "dec_x100": [
        ("quarter", "0.25", "25"),
        ("one-place", "1.5", "150"),
        ("negative", "-0.125", "-12.5"),
        ("integer", "3", "300"),
        ("small", "0.001", "0.1"),
        ("zero", "0", "0"),
        ("null", None, None),
    ],
    "dec_d100": [
        ("percent", "25", "0.25"),
        ("three-digits", "150", "1.5"),
        ("negative", "-12.5", "-0.125"),
        ("one-digit", "3", "0.03"),
        ("decimal", "0.1", "0.001"),
        ("long", "12345", "123.45"),
        ("null", None, None),
    ],
    "not_a_number": [
        ("nan", "nan", True),
        ("negative-inf", "-inf", True),
        ("plus-infinity", "+infinity", True),
        ("infinity-sign", "∞", True),
        ("negative-infinity-sign", "-∞", True),
        ("word", "infinite", False),
        ("number-before", "2inf", False),
        ("number", "5", False),
    ],
    "num_close": [
        ("equal", (1.0, 1.0, 0.0), True),
        ("at-tolerance", (1.5, 1.0, 0.5), True),
        ("over-tolerance", (1.5, 1.0, 0.25), False),
        ("relative-at-tolerance", (150.0, 100.0, 0.5), True),
        ("relative-over", (151.0, 100.0, 0.5), False),
        ("negative-relative", (-150.0, -100.0, 0.5), True),
        ("absolute-below-one", (0.5, 0.0, 0.5), True),
        ("absolute-over", (0.75, 0.0, 0.5), False),
    ],
    "norm_formula": [
        ("ascii", "P & ~Q -> R", "P∧¬Q→R"),
        ("iff-arrow", "P <-> Q", "P↔Q"),
        ("iff-double-arrow", "P <=> Q", "P↔Q"),
        ("implies-double-arrow", "P => Q", "P→Q"),
        ("or", "P | Q", "P∨Q"),
        ("bang", "!P", "¬P"),
        ("whitespace", "P\n∧ Q", "P∧Q"),
        ("unicode", "P∧Q", "P∧Q"),
    ],
    "norm_digits": [
        ("arabic-indic", "٤٢", "42"),
        ("devanagari", "१२", "12"),
        ("fullwidth-digits", "４２", "42"),
        ("fullwidth-sign", "＄５", "$5"),
        ("ascii", "42", "42"),
        ("no-digit", "é", "é"),
        ("superscript-not-a-decimal-digit", "x²", "x²"),
    ],
    # norm_verdict reads a norm_answer key: lower case, no whitespace
    "norm_verdict": [
        ("yes", "yes", "true"),
        ("cannot-be-determined", "cannotbedetermined", "unknown"),
        ("curly-apostrophe", "can’ttell", "unknown"),
        ("bold", "**false**", "false"),
        ("font", r"\textsc{true}", "true"),
        ("reason", "true(qfollowsbymodusponens)", "true"),
        ("negation", "!true", None),
        ("denied-reason", "true(orfalse)", None),
    ],
}


@pytest.mark.parametrize(
    ("macro", "k"),
    [(m, k) for m, rows in MACROS.items() for k in range(len(rows))],
    ids=[f"{m}-{c[0]}" for m, rows in MACROS.items() for c in rows],
)
def test_normalise_macro(macro: str, k: int) -> None:
    _, given, want = MACROS[macro][k]
    args = given if isinstance(given, tuple) else (given,)
    params = ", ".join(f"$a{i}" for i in range(len(args)))
    con = connect()
    got = con.execute(f"SELECT {macro}({params})", {f"a{i}": a for i, a in enumerate(args)}).fetchone()[0]
    assert got == want
