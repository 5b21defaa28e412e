"""The symbolic-gold macros (rlvr/verify/sql/symbolic.sql), called directly: one table per macro, its arguments ->
the value it returns, with the case names as test ids. Each table follows the macro's comment in the .sql file,
which is its contract; docs/verifiers.md ("an answer is a value") gives the rules in prose.

Macros documented as taking normalised text (norm_answer: no spaces, lower case) get it here.

    .venv/bin/python -m pytest -q tests/unit/verify/sql/test_symbolic.py
"""

from __future__ import annotations

import pytest

from rlvr.verify.scoring import connect

MACROS = {
    "looks_symbolic": [
        ("latex", r"2\sqrt{3}", True),
        ("coefficient", "2x", True),
        ("list", "1,2", True),
        ("sum", "x+1", True),
        ("difference-of-letters", "x-y", True),
        ("negative", "-3", False),
        ("word", "paris", False),
        ("hyphenated-words", "new-york", False),
    ],
    "text_words": [
        ("word-in-text", r"2\sqrt{3} \text{ else } 3", True),
        ("unit-in-text", r"18\text{ cm}", True),
        ("letter-in-mathrm", r"\mathrm{x}", True),
        ("after-spacing-command", r"\text{\, and}", True),
        ("digit-in-textbf", r"\textbf{5}", True),
        ("only-spaces", r"\text{ }", False),
        ("only-spacing-command", r"\text{\,}", False),
        ("mathbb-is-no-kin", r"\mathbb{R}", False),
    ],
    "frac_terms": [
        ("cancels", r"\frac{2}{4}", [{"a": "2", "ap": "", "neg": "", "b": "4", "bp": ""}]),
        ("leading-integers", r"\frac{2\sqrt{2}}{12}", [{"a": "2", "ap": "", "neg": "", "b": "12", "bp": ""}]),
        ("negative-below", r"\dfrac{3}{-4}", [{"a": "3", "ap": "", "neg": "-", "b": "4", "bp": ""}]),
        ("power-above", r"\frac{2^{3}}{4}", [{"a": "2", "ap": "^", "neg": "", "b": "4", "bp": ""}]),
        ("power-below", r"\frac{2}{3^2}", [{"a": "2", "ap": "", "neg": "", "b": "3", "bp": "^"}]),
        (
            "two-fractions",
            r"\frac{1}{2}+\tfrac{3}{5}",
            [{"a": "1", "ap": "", "neg": "", "b": "2", "bp": ""}, {"a": "3", "ap": "", "neg": "", "b": "5", "bp": ""}],
        ),
        ("letter-above", r"\frac{x}{2}", []),
        ("slash", "3/4", []),
    ],
    "unsimplified": [
        ("frac-cancels-beside-root", r"\frac{2\sqrt{2}}{12}", True),
        ("frac-over-negative", r"\frac{3}{-4}", True),
        ("frac-over-one", r"\frac{x}{1}", True),
        ("slash-cancels", r"2\sqrt{2}/12", True),
        ("frac-in-frac", r"\frac{1}{\frac{1}{2}}", True),
        ("same-above-and-below", r"\frac{x+1}{x+1}", True),
        ("literal-in-brackets", r"\frac{(2)}{(4)}", True),
        ("cube-root-of-cube", r"\sqrt[3]{8}", True),
        ("log-of-one", r"\log_{2}1", True),
        ("decimal-in-root", r"\sqrt{1.0}", True),
        (
            "numerator-beyond-hugeint",
            r"\frac{1111111111111111111111111111111111111111}{2}",
            False,
        ),  # no cast error: the pass stands
        ("slash-numerator-beyond-hugeint", r"2\sqrt{1111111111111111111111111111111111111111}/12", False),
        ("literals-times-symbol", r"2\times3\pi", True),
        ("power-of-three-digits", "(x+1)^{999}", True),
        ("power-in-power", "x^{2^{3}}", True),
        ("times-one-point-zero", r"2x\cdot1.0", True),
        ("plus-zero-point-zero", "2x+0.0", True),
        ("power-one-point-zero", r"2\sqrt{3}^{1.0}", True),
        ("decimal-coefficient", r"2.0\sqrt{3}", False),
        ("lowest-terms", r"\frac{1}{2}", False),
        ("root-with-square-factor", r"\sqrt{12}", False),
        ("power-of-two-digits", "x^{99}", False),
    ],
    "ops_beyond": [
        ("trig", (r"x^2+\sin\frac{\pi}{2}", "x^2+1"), True),
        ("log", (r"x^2+\log_{10}10", "x^2+1"), True),
        ("absolute-value", ("|x|", "x"), True),
        ("floor", (r"\lfloor2.5\rfloor", "3"), True),
        ("max", (r"\operatorname{max}(a,b)", "a"), True),
        ("set-operation", (r"(0,1)\cup\emptyset", "(0,1)"), True),
        ("gold-has-trig", (r"\sin(x)", r"\cos(x)"), False),
        ("command-starting-sin", (r"\sine", "x"), False),
    ],
    "strip_name": [
        ("function", "f(x) = x^2", "x^2"),
        ("subscript", "a_{n} = 2n", "2n"),
        ("capitals", "AB = 5", "5"),
        ("greek", r"\theta = \frac{\pi}{2}", r"\frac{\pi}{2}"),
        ("in", r"x \in (0,1)", "(0,1)"),
        ("derivative", r"\frac{dy}{dx} = 2x", "2x"),
        ("word", "not = 5", "not = 5"),
        ("other-command", r"\sqrt{13} = 3.6", r"\sqrt{13} = 3.6"),
    ],
    "value_atoms": [
        ("number", "18", 1),
        ("name-left-out", "x = 18", 1),
        ("polynomial", "x^2-1", 3),
        ("factored", "(x-1)(x+1)", 4),
        ("padded", "x^2+1+x-x", 5),
        ("layout-left-out", r"\displaystyle\frac{1}{2}", 2),
        ("and-left-out", "1 and 2", 2),
        ("word-holding-and", "andy", 4),
    ],
    "dec_places": [
        ("seven", "(0.5000004,3)", 7),
        ("no-leading-zero", "(.5000004,3)", 7),
        ("approximation", "3.464102", 6),
        ("trailing-zeros", "18.500", 1),
        ("zero-fraction", "18.0", 0),
        ("the-most", "1.25+3.1", 2),
        ("zeros-inside", "1.0001", 4),
        ("integer", "18", 0),
        ("no-number", "x", 0),
    ],
    "unevaluated": [
        ("literals-in-a-sum", "x^2+2-1", True),
        ("fractions-are-literals", r"\frac{1}{2}+\frac{1}{3}", True),
        ("literal-in-brackets", "5+(-1)", True),
        ("integer-power", "2^{10}", True),
        ("factorial", "5!", True),
        ("binom", r"\binom{10}{3}", True),
        ("integral", r"\int_0^1x\,dx", True),
        ("power-of-bracket-of-numbers", r"(1+\sqrt{2})^2", True),
        ("bracket-to-two-digits", "(x+1)^{10}", True),
        ("scalar-before-matrix", r"2\begin{pmatrix}1&2\end{pmatrix}", True),
        ("radical-in-sum-below", r"\frac{1}{3-2\sqrt{2}}", True),
        ("unsimplified", r"\frac{2}{4}", True),
        ("closed-form", r"2+3\sqrt{2}", False),
        ("factored-square", "(2x-3)^2", False),
        ("slash-fraction", "1/2", False),
    ],
    "unit_word": [
        ("length", "cm", True),
        ("area", "square feet", True),
        ("any-case", "Kilometers", True),
        ("letter-m", "m", True),
        ("letter-in-other-case", "M", False),
        ("degrees", "degrees", False),
        ("scale-word", "million", False),
        ("not-a-unit", "eggs", False),
    ],
    "unit_power": [
        ("none", "", True),
        ("square", "^2", True),
        ("braced-cube", "^{2}", True),
        ("spaced", " ^ 3", True),
        ("own-math-span", "$^{2}$", True),
        ("fourth-power", "^4", False),
        ("two-digits", "^22", False),
        ("no-caret", "2", False),
    ],
    "qualifier_pattern": [
        ("k-in-z", r"\frac{\pi}{4}+k\pi, k \in \mathbb{Z}", True),
        ("brackets", r"2k\pi \quad (k \in \mathbb{Z})", True),
        ("text-where", r"2n\pi, \text{ where } n \in \mathbb{Z}", True),
        ("text-for-integer", r"2k\pi \text{ for integer } k", True),
        ("reals", r"2k\pi, k \in \mathbb{R}", False),
        ("other-letter", r"x \in \mathbb{Z}", False),
        ("not-at-the-end", r"2k\pi, k \in \mathbb{Z}, k > 0", False),
        ("some-real", r"2k\pi \text{ for some real } k", False),
    ],
    "value_tail": [
        ("unit-squared", r"36\pi \text{ cm}^2", r"36\pi"),
        ("mathrm-after-tilde", r"2\sqrt{3}~\mathrm{m}", r"2\sqrt{3}"),
        ("two-word-unit", r"36\pi \text{ square feet}", r"36\pi"),
        ("qualifier", r"\frac{\pi}{4}+k\pi, k \in \mathbb{Z}", r"\frac{\pi}{4}+k\pi"),
        ("text-qualifier", r"2k\pi \text{ for integer } k", r"2k\pi"),
        ("qualifier-letter-unused", r"\frac{\pi}{4}, k \in \mathbb{Z}", r"\frac{\pi}{4}, k \in \mathbb{Z}"),
        ("other-word", r"\sqrt{2} \text{ doubtful}", r"\sqrt{2} \text{ doubtful}"),
        ("single-letter", r"\sqrt{2}\text{ i}", r"\sqrt{2}\text{ i}"),
        ("unit-power-in-its-own-span", r"36\pi \text{ cm}$^2$", r"36\pi"),
    ],
    "uni_math": [
        ("root", "5√2", r"5\sqrt{2}"),
        ("root-of-bracket", "√(x+1)", r"\sqrt{x+1}"),
        ("cube-root", "∛2", r"\sqrt[3]{2}"),
        ("index-before-root", "³√8", r"\sqrt[3]{8}"),
        ("square", "x²", "x^{2}"),
        ("negative-power", "x⁻¹", "x^{-1}"),
        ("fractions", "¾+⅓", r"\frac{3}{4}+\frac{1}{3}"),
        ("latex", "x^2", "x^2"),
    ],
    "eq_computed": [
        ("root-with-square-factor", r"\sqrt{72} = 6\sqrt{2}", True),
        ("integral-with-limits", r"\int_0^1 x\,dx = \frac{1}{2}", True),
        ("function", r"\sin\frac{\pi}{6} = \frac{1}{2}", True),
        ("factorial", "5! = 120", True),
        ("command-with-subscript", r"\log_2 8 = 3", True),
        ("sum-with-limits", r"\sum_{k=1}^{n} k = \frac{n(n+1)}{2}", True),
        ("product-of-brackets", "(x-1)(x+1) = x^2-1", True),
        ("root-of-sum", r"\sqrt{2+2} = 2", True),
        ("several-values", r"x = 2\sqrt{3} = 3\sqrt{2}", False),
        ("square-free-root", r"\sqrt{13} = 3.6", False),
    ],
    "shape_of": [
        ("set", r"\{0, 1\}", "set"),
        ("sized-set", r"\left\{0, 1\right\}", "set"),
        ("tuple", "(0, 1)", "tuple"),
        ("interval", "[0, 1)", "tuple"),
        ("angle-brackets", r"\langle 1, 2\rangle", "tuple"),
        ("list", "0, 1", "list"),
        ("one-value", "18", ""),
        ("union", r"(0,1)\cup(2,3)", ""),
    ],
    "set_shape": [
        ("in-set", r"x\in\{0,1\}", "set"),
        ("named-set", r"s=\{1,2,3\}", "set"),
        ("named-list", "x=0,1", "list"),
        ("named-tuple", "f(x)=(1,2)", "tuple"),
        ("displaystyle", r"\displaystyle(0,1)", "tuple"),
        ("quad", r"(0,\quad1)", "tuple"),
        ("hspace", r"\{0,\hspace{1em}1\}", "set"),
        ("one-value", "18", ""),
    ],
    "letters": [
        ("capital", "N^2+1", ["N"]),
        ("command", r"\Pi", [r"\Pi"]),
        ("word", "Max", ["Max"]),
        ("digit-then-capital", "2Xyz", ["X", "y", "z"]),
        ("name-left-out", r"f(x) = \sin x", [r"\sin", "x"]),
        ("mathbb-left-out", r"x \in \mathbb{R}", []),
        ("text-read-through", r"\text{cm}", ["cm"]),
        ("sizing-left-out", r"\Bigl(a+b\Bigr)", ["a", "b"]),
    ],
    # (answer, letters(gold), the same lower-cased, the gold has a capital)
    "case_clash": [
        ("lower-for-capital", ("n^2+1", ["N"], ["n"], True), True),
        ("capital-command", (r"\Pi", [r"\pi"], [r"\pi"], False), True),
        ("capital-letter", ("2Xyz", ["x", "y", "z"], ["x", "y", "z"], False), True),
        ("lower-for-capital-only-gold", ("x", ["X"], ["x"], True), True),
        ("same-case", ("N^2+1", ["N"], ["n"], True), False),
        ("other-letter", ("m^2+1", ["N"], ["n"], True), False),
        ("both-cases-in-gold", ("GmM", ["G", "m", "M"], ["g", "m", "m"], True), False),
        ("no-capital-anywhere", ("n+1", ["n"], ["n"], False), False),
    ],
    "hedged": [
        ("or", "18 or 19", True),
        ("approx", r"3.46 \approx 2\sqrt{3}", True),
        ("to", r"x \to 2", True),
        ("pm", r"\pm 2", True),
        ("equiv", r"a \equiv b", True),
        ("quad-between", r"1 \quad \sqrt{2}", True),
        ("quad-after-a-comma", r"(0,\quad 1)", False),
        ("word-holding-or", "floor", False),
        ("command-starting-to", r"\top", False),
    ],
}

# how a macro is called, where not as macro(arguments)
CALLS = {
    "qualifier_pattern": "regexp_matches($a0, qualifier_pattern())",
    "unit_power": "regexp_full_match($a0, unit_power())",
}


@pytest.mark.parametrize(
    ("macro", "k"),
    [(m, k) for m, rows in MACROS.items() for k in range(len(rows))],
    ids=[f"{m}-{c[0]}" for m, rows in MACROS.items() for c in rows],
)
def test_symbolic_macro(macro: str, k: int) -> None:
    _, args, want = MACROS[macro][k]
    args = args if isinstance(args, tuple) else (args,)
    sql = CALLS.get(macro, f"{macro}({', '.join(f'$a{i}' for i in range(len(args)))})")
    got = connect().execute(f"SELECT {sql}", {f"a{i}": a for i, a in enumerate(args)}).fetchone()[0]
    if macro == "letters":  # (list_distinct keeps no order)
        got, want = sorted(got), sorted(want)
    assert got == want
