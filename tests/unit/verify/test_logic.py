"""rlvr.verify.logic (parser, canonical form, truth tables, conclusion checks, verdicts) on hand cases,
and the shipped logic set (data/logic.jsonl, built by rlvr.data.generators.logic): every gold answer is judged correct.

Run: .venv/bin/pytest tests/unit/verify/test_logic.py -q   (about a second; the rebuild of the shipped
file: tests/integration/test_logic_build.py)
"""

from __future__ import annotations

import collections
import json

import pyarrow as pa
import pytest
from rlvr.data import logic as data_logic
from rlvr.data.generators import logic as build_logic

from rlvr.schema import PROBLEMS
from rlvr.verify import logic
from rlvr.verify.logic import (
    canonical,
    check_conclusion,
    decide,
    entails,
    equivalent,
    height,
    is_tautology,
    normalise_verdict,
    parse,
)

# ---- parser ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("P", "P"),
        ("¬P ∧ Q", ("∧", ("¬", "P"), "Q")),  # ¬ binds tighter than ∧
        ("P ∧ Q ∨ R", ("∨", ("∧", "P", "Q"), "R")),  # ∧ tighter than ∨
        ("P ∨ Q ∧ R", ("∨", "P", ("∧", "Q", "R"))),
        ("P ∨ Q → R", ("→", ("∨", "P", "Q"), "R")),  # ∨ tighter than →
        ("P → Q ↔ R", ("↔", ("→", "P", "Q"), "R")),  # → tighter than ↔
        ("P → Q → R", ("→", "P", ("→", "Q", "R"))),  # → is right-associative
        ("P ∧ Q ∧ R", ("∧", ("∧", "P", "Q"), "R")),  # ∧ groups to the left
        ("P ↔ Q ↔ R", ("↔", ("↔", "P", "Q"), "R")),
        ("(P → Q) → R", ("→", ("→", "P", "Q"), "R")),
        ("¬¬P", ("¬", ("¬", "P"))),
        ("¬(P ∨ Q)", ("¬", ("∨", "P", "Q"))),
    ],
)
def test_precedence_and_associativity(text, tree):
    assert parse(text) == tree


@pytest.mark.parametrize(
    "spelling",
    [
        "P & ~Q -> R | S <-> P",
        "P && !Q => R || S <=> P",
        "P and not Q -> R or S <-> P",
        "P AND NOT Q -> R Or S <-> P",
        "P∧¬Q→R∨S↔P",
        "((P ∧ (¬Q))) ⇒ (R ∨ S) ⇔ P",
        "  P\t&\n~Q   ->R|S<->P ",
        # LaTeX, other unicode forms, square brackets and wrappers
        "P \\land \\neg Q \\to R \\lor S \\leftrightarrow P",
        "$P \\wedge \\lnot Q \\implies R \\vee S \\iff P$",
        "\\left[P ⋀ ¬Q\\right] ⊃ [R ⋁ S] ⟷ P",
        "**$\\boxed{P ∧ ¬Q ⟶ R ∨ S ⟺ P}$**.",
        "\\(P \\land \\lnot Q \\Rightarrow R \\lor S \\Leftrightarrow P\\)",
        "`P & ~Q -> R | S <-> P`.",
        # \\sim and ∼ for not, long arrows, spacing and style commands, text and font groups
        "$\\displaystyle P \\,\\land\\, \\sim Q \\Longrightarrow R \\quad\\lor\\quad S \\Longleftrightarrow P$",
        "P ∧ ∼Q \\longrightarrow R \\;\\vee\\: S \\longleftrightarrow\\ P",
        "\\mathrm{P} \\land \\neg{Q} \\to \\mathbf{R} \\lor \\textbf{S} \\iff \\mathit{P}",
        "P \\text{ and } \\text{not } Q \\to R \\text{ or } S \\leftrightarrow P",
        "\\text{P ∧ ¬Q → R ∨ S ↔ P}",
        "\\textbf{(P ∧ \\sim{Q})} \\to {(R ∨ S)} ↔ {P}",
        # 'implies' and 'iff' are words as 'and', 'or' and 'not' are
        "P and not Q implies R or S iff P",
        "P AND NOT Q IMPLIES R OR S IFF P",
    ],
)
def test_every_spelling_gives_the_same_canonical_form(spelling):
    assert canonical(spelling) == "(((P∧¬Q)→(R∨S))↔P)"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("P ∧ Q", "Q ∧ P"),  # canonical is about spelling: commuted is a different tree
        ("P → Q → R", "(P → Q) → R"),
        ("¬¬P", "P"),
        ("P ∧ Q ∧ R", "P ∧ (Q ∧ R)"),
        ("¬P ∧ Q", "¬(P ∧ Q)"),
    ],
)
def test_canonical_tells_different_trees_apart(a, b):
    assert canonical(a) != canonical(b)


def test_spacing_commands_are_no_operators():
    assert canonical("P \\land \\!Q") == "(P∧Q)"  # \\! is a negative thin space, not the ! of not
    assert canonical("\\neg{\\mathrm{P}}") == canonical("{\\neg P}") == "¬P"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty formula"),
        ("   ", "empty formula"),
        ("P Q", "unexpected 'Q' at position 2: expected an operator or the end"),
        ("(P ∧ Q", r"missing '\)' at position 6"),
        ("P ∧ Q)", r"unexpected '\)' at position 5"),
        ("P ∧", "formula ends too early"),
        ("∨ P", "unexpected '∨' at position 0: expected a variable"),
        ("()", r"unexpected '\)' at position 1"),
        (
            "p ∧ q",
            r"unexpected word 'p' at position 0 \(variables are single upper-case letters\)",
        ),
        ("PQ", "unexpected word 'PQ'"),
        ("P + Q", r"unexpected character '\+' at position 2"),
        ("P < Q", "unexpected character '<'"),
        ("__import__('os')", "unexpected character '_'"),
        ("P ᵢ", "unexpected (word|character) 'ᵢ' at position 2"),
        ("[P ∧ Q)", "missing ']' at position 6"),  # a bracket is closed by its own kind
        ("P \\oplus Q", r"unexpected command '\\\\oplus' at position 2"),  # unknown, not dropped
        ("\\negP", r"unexpected command '\\\\negP' at position 0"),  # a command ends where its letters do
        ("P ^ Q", r"unexpected character '\^'"),  # exclusive or in C and Python: not read as and
        ("P v Q", "unexpected word 'v'"),
        ("$P$ ∧ $Q$", r"unexpected character '\$'"),  # two wrapped formulas are not one
        ("\\boxed{P} ∧ \\boxed{Q}", "unexpected command"),
        # braces are LaTeX's invisible grouping: read only where brackets would read the same
        ("\\neg{Q \\lor R}", r"the group \{\.\.\.\} at position 4 holds more than one"),
        ("\\text{P ∧ Q} ∨ R", r"the group \{\.\.\.\} at position 5 holds more than one"),
        ("\\textbf{(P) ∧ (Q)} ∨ R", "the group"),
        ("\\neg{}P", "the group .* holds nothing"),
        ("{P", "missing '}' for the '{' at position 0"),
        ("P}", "unexpected '}' at position 1"),
        ("\\mathrm P", r"unexpected command '\\\\mathrm'"),  # a font command is read before a group only
        # connective words: only whole words, and only the connectives' own
        ("P implied R", "unexpected word 'implied' at position 2"),
        ("Pimplies R", "unexpected word 'Pimplies' at position 0"),
        ("P implies", "formula ends too early"),
        ("if P then R", "unexpected word 'if' at position 0"),
    ],
)
def test_bad_input_is_rejected_with_a_readable_message(text, message):
    with pytest.raises(ValueError, match="^" + message):
        parse(text)


def test_size_caps():
    long_ok = "P" + " ∧ P" * logic.MAX_HEIGHT
    assert len(long_ok) <= logic.MAX_CHARS and is_tautology(long_ok) is False
    with pytest.raises(ValueError, match="too long: 4001 characters, at most 4000"):
        parse("P" + " " * 4000)
    # one operator deeper per ∧: refused past MAX_HEIGHT, before anything recurses on the tree
    assert height(parse("P" + "&P" * logic.MAX_HEIGHT)) == logic.MAX_HEIGHT
    with pytest.raises(ValueError, match="too deep: 501 operators on one path, at most 500"):
        parse("P" + "&P" * (logic.MAX_HEIGHT + 1))
    ok, reason = check_conclusion(["P → Q", "P"], "Q" + "&Q" * 1998)
    assert not ok and reason.startswith("unparsable: formula too deep: 1998 operators")
    twelve = " ∨ ".join("ABCDEFGHIJKL")
    assert is_tautology(f"({twelve}) ∨ ¬A")
    with pytest.raises(ValueError, match="too many variables: 13, at most 12"):
        parse(twelve + " ∨ M")
    with pytest.raises(ValueError, match="too many variables: 13"):
        entails([twelve], "M")  # the cap holds for the whole table, not only each formula
    deep = "(" * 41 + "P" + ")" * 41
    with pytest.raises(ValueError, match="nested too deeply"):
        parse(deep)
    with pytest.raises(ValueError, match="nested too deeply"):
        parse("¬" * 41 + "P")
    assert parse("(" * 40 + "P" + ")" * 40) == "P"
    # a long right-associative chain is folded in a loop, not by recursion
    assert is_tautology("P" + " → P" * 99)


# ---- truth tables ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("premises", "conclusion", "expected"),
    [
        (["P → Q", "P"], "Q", True),  # modus ponens
        (["P → Q", "¬Q"], "¬P", True),  # modus tollens
        (["P → Q", "Q"], "P", False),  # affirming the consequent
        (["P ∨ Q", "¬P"], "Q", True),  # disjunctive syllogism
        (["P → Q", "Q → R"], "P → R", True),
        (["P ↔ Q"], "Q → P", True),
        (["P"], "P ∨ S", True),  # a variable the premises do not mention
        (["P ∧ ¬P"], "S", True),  # inconsistent premises entail anything
        ([], "P ∨ ¬P", True),
        ([], "P", False),
    ],
)
def test_entails(premises, conclusion, expected):
    assert entails(premises, conclusion) is expected


def test_constants():
    assert is_tautology("P ∨ ⊤") and is_tautology("\\top") and not is_tautology("⊥")
    assert equivalent("P ∨ ⊥", "P") and equivalent("P ∧ ⊤", "P") and equivalent("⊥ → Q", "⊤")
    assert canonical("¬⊥ ∧ \\bot") == "(¬⊥∧⊥)" and parse("[⊤]") == "⊤"


def test_tautology_and_equivalence():
    assert is_tautology("P ∨ ¬P") and is_tautology("(P → Q) ↔ (¬Q → ¬P)")
    assert is_tautology("((P → Q) → P) → P")  # Peirce's law
    assert not is_tautology("P → Q") and not is_tautology("P ∧ ¬P")
    assert equivalent("¬(P ∧ Q)", "¬P ∨ ¬Q") and equivalent("P → Q", "¬P ∨ Q")
    assert not equivalent("P → Q", "Q → P")


@pytest.mark.parametrize(
    ("premises", "statement", "verdict"),
    [
        (["P → Q", "P"], "Q", "true"),
        (["P → Q", "¬Q"], "P", "false"),
        (["P → Q"], "P", "unknown"),
        (["P ∨ Q", "¬P"], "Q ∧ ¬P", "true"),
        (["P ∨ Q"], "¬P ∧ ¬Q", "false"),
        (["P", "¬P"], "Q", "true"),  # inconsistent: "true" is checked first
        ([], "P ∨ ¬P", "true"),
    ],
)
def test_decide(premises, statement, verdict):
    assert decide(premises, statement) == verdict


@pytest.mark.parametrize(
    ("answer", "correct", "reason"),
    [
        ("R", True, "correct: 'R' follows from the premises"),
        (
            "q & r",
            False,
            "unparsable: unexpected word 'q' at position 0 (variables are single upper-case letters)",
        ),
        ("Q or R", True, "correct: '(Q∨R)' follows from the premises"),
        (
            "Q and R",
            False,
            "wrong: '(Q∧R)' does not follow from the premises (counterexample P=0 Q=0 R=1)",
        ),
        ("P -> R", True, "correct: '(P→R)' follows from the premises"),
        (
            "P",
            False,
            "wrong: 'P' does not follow from the premises (counterexample P=0 Q=0 R=1)",
        ),
        (
            "P ∧ R",
            False,
            "wrong: '(P∧R)' does not follow from the premises (counterexample P=0 Q=0 R=1)",
        ),
        (
            "R ∨ ¬R",
            False,
            "trivial: '(R∨¬R)' is a tautology, true whatever the premises say",
        ),
        (
            "R ∨ S",
            False,
            "wrong: '(R∨S)' uses S, not among the premises' variables P, Q, R",
        ),
        ("", False, "unparsable: empty formula"),
        # copying out is not concluding: a premise, premises joined by ∧, a premise weakened
        ("P ∨ R", False, "restated: '(P∨R)' is premise 3 as given; a conclusion must derive something"),
        ("R ∨ P", False, "restated: '(R∨P)' is premise 3 as given; a conclusion must derive something"),
        (
            "(P → Q) ∧ (Q → R)",
            False,
            "restated: '((P→Q)∧(Q→R))' is premises 1 and 2 together as given; a conclusion must derive something",
        ),
        (
            "(P → Q) ∧ (Q → R) ∧ (P ∨ R)",
            False,
            "restated: '(((P→Q)∧(Q→R))∧(P∨R))' is premises 1, 2 and 3 together as given; a conclusion must derive something",
        ),
        (
            "P ∨ R ∨ Q",
            False,
            "restated: '((P∨R)∨Q)' follows from premise 3 alone (it weakens it); a conclusion must combine premises",
        ),
        (
            "¬P ∨ Q ∨ R",
            False,
            "restated: '((¬P∨Q)∨R)' follows from premise 1 alone (it weakens it); a conclusion must combine premises",
        ),
        ("(P → R) ∧ R", True, "correct: '((P→R)∧R)' follows from the premises"),
    ],
)
def test_check_conclusion(answer, correct, reason):
    # R holds (P gives Q gives R; not P gives R); P and Q are open
    premises = ["P → Q", "Q → R", "P ∨ R"]
    assert check_conclusion(premises, answer) == (correct, reason)


def test_check_conclusion_raises_on_bad_premises():
    with pytest.raises(ValueError, match="unexpected"):
        check_conclusion(["P +"], "P")
    with pytest.raises(ValueError, match="eliminate 'S' is not among the premises' variables P, Q"):
        check_conclusion(["P → Q"], "Q", eliminate="S")


def test_one_premise_pays_what_it_implies_but_not_itself():
    assert check_conclusion(["P ∧ Q"], "Q") == (True, "correct: 'Q' follows from the premises")
    assert (
        check_conclusion(["P ∧ Q"], "Q ∧ P")[1] == "restated: '(Q∧P)' is premise 1 as given; a conclusion must derive something"
    )


# (P → Q), (¬P → R), (R → S); eliminating P leaves (Q ∧ (R → S)) ∨ (R ∧ S), which is (Q ∧ ¬R) ∨ (R ∧ S)
ELIMINATE_P = ["P → Q", "¬P → R", "R → S"]


@pytest.mark.parametrize(
    ("answer", "correct", "reason"),
    [
        ("(Q ∧ ¬R) ∨ (R ∧ S)", True, "correct: '((Q∧¬R)∨(R∧S))' is what the premises say once P is eliminated"),
        ("(R → S) ∧ (Q ∨ R)", True, "correct: '((R→S)∧(Q∨R))' is what the premises say once P is eliminated"),
        ("(q & ~r) | (r & s)".upper(), True, "correct: '((Q∧¬R)∨(R∧S))' is what the premises say once P is eliminated"),
        # the copied premise, and every formula weaker than the answer: they follow, and are not it
        (
            "R → S",
            False,
            "weaker: '(R→S)' follows but also holds at Q=0 R=0 S=0, where no value of P makes every premise true; "
            "the answer must say all the premises say without P",
        ),
        (
            "Q ∨ R",
            False,
            "weaker: '(Q∨R)' follows but also holds at Q=0 R=1 S=0, where no value of P makes every premise true; "
            "the answer must say all the premises say without P",
        ),
        (
            "S ∨ ¬S",
            False,
            "weaker: '(S∨¬S)' follows but also holds at Q=0 R=0 S=0, where no value of P makes every premise true; "
            "the answer must say all the premises say without P",
        ),
        # stronger: it does not follow
        ("Q ∧ ¬R", False, "wrong: '(Q∧¬R)' does not follow from the premises (counterexample P=0 Q=0 R=1 S=1)"),
        # the premises themselves, or the answer padded with P, mention the eliminated variable
        ("(P → Q) ∧ (¬P → R) ∧ (R → S)", False, "wrong: '(((P→Q)∧(¬P→R))∧(R→S))' mentions P, which the question eliminates"),
        ("((Q ∧ ¬R) ∨ (R ∧ S)) ∧ (P ∨ ¬P)", False, "wrong: '(((Q∧¬R)∨(R∧S))∧(P∨¬P))' mentions P, which the question eliminates"),
        ("Q ∧ T", False, "wrong: '(Q∧T)' uses T, not among the premises' variables P, Q, R, S"),
        ("Q ∧", False, "unparsable: formula ends too early: expected a variable, ¬ or ("),
    ],
)
def test_check_conclusion_with_a_variable_to_eliminate(answer, correct, reason):
    assert check_conclusion(ELIMINATE_P, answer, eliminate="P") == (correct, reason)


def test_eliminated_lists_the_assignments_some_value_of_the_variable_allows():
    keep, models = logic.eliminated(ELIMINATE_P, "P")
    assert keep == ["Q", "R", "S"]
    assert [tuple(int(m[v]) for v in keep) for m in models] == [(0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 1)]
    assert logic.eliminated(["P ∨ Q"], "P") == (["Q"], [{"Q": False}, {"Q": True}])  # nothing left to say


def test_the_generator_eliminates_only_where_copying_does_not_answer():
    assert build_logic.elimination_target(ELIMINATE_P) == "P"
    # eliminating P from (P → Q), Q leaves Q, a copied premise; eliminating Q leaves P ∨ ¬P; none qualifies
    assert build_logic.elimination_target(["P → Q", "Q"]) is None
    assert build_logic.elimination_target(["P ↔ Q", "Q ∨ R"]) == "Q"  # P leaves Q ∨ R (premise 2); Q leaves P ∨ R
    keep, models = logic.eliminated(ELIMINATE_P, "P")
    gold = build_logic.gold_formula(keep, models)
    assert gold == "(Q ∧ ¬R) ∨ (R ∧ S)"
    assert check_conclusion(ELIMINATE_P, gold, eliminate="P")[0]


def test_a_formula_of_max_chars_is_decided_fast():
    """MAX_CHARS bounds the truth table's cost: a formula of nearly 4,000 characters over 12 variables
    (about 1,000 nodes on 4,096-row tables) is checked in well under a second."""
    import time

    term = "(A & ~B & C & ~D & E & ~F & G & ~H & I & ~J & K & ~L)"
    formula = " | ".join([term] * (logic.MAX_CHARS // (len(term) + 3)))
    assert logic.MAX_CHARS - 100 < len(formula) <= logic.MAX_CHARS
    premises = [" | ".join("ABCDEFGHIJKL"), "A → B"]
    start = time.perf_counter()
    for _ in range(5):
        ok, reason = check_conclusion(premises, formula)
    assert not ok and reason.startswith("wrong:")
    assert time.perf_counter() - start < 2.5


# ---- verdicts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("true", "true"),
        ("Yes.", "true"),
        ("**True**", "true"),
        ("VALID", "true"),
        ("It follows", "true"),
        ("false", "false"),
        ("No", "false"),
        ("invalid", "false"),
        ("does not follow.", "false"),
        ("Unknown", "unknown"),
        ("uncertain", "unknown"),
        ("Cannot be determined", "unknown"),
        ("can't   tell", "unknown"),
        ("'unknown'", "unknown"),
        ("not enough information", "unknown"),
        ("maybe", None),
        ("true or false", None),
        ("", None),
        (None, None),
        ("P ∧ Q", None),
        # curly apostrophes and quotation marks, text commands around the whole
        ("It doesn’t follow.", "false"),
        ("Can’t be determined", "unknown"),
        ("can ʼt tell", "unknown"),
        ("“True”", "true"),
        ("‘false’", "false"),
        ("\\textsc{true}", "true"),
        ("\\texttt{ No. }", "false"),
        ("**\\emph{Unknown}**", "unknown"),
        ("\\textsc{!true}", None),
        ("\\textsc{not true}", None),
        ("\\neg\\textsc{true}", None),
        ("\\overline{true}", None),
        ("\\textsc{true} \\textsc{false}", None),
        # a verdict in a sentence: only one, stated plainly
        ("Yes, it follows.", "true"),
        ("True (Q follows by modus ponens)", "true"),
        ("The statement is true.", "true"),
        ("It is false", "false"),
        ("No, it does not follow.", "false"),
        ("The conclusion is unknown.", "unknown"),
        ("False (P would make Q hold)", "false"),
        ("It is not true.", None),
        ("The statement is not true.", None),
        ("True or false?", None),
        ("The statement is true?", None),
        ("true... or maybe false", None),
        ("The premise is true but the conclusion is unknown", None),
        ("Not sure, maybe true", None),
        ("True (or false)", None),
        ("True (not really)", None),
        ("True (I think)", None),
        ("True (?)", None),
        ("True (the negation of Q follows)", None),
        ("True (((Q)))", None),
        ("No, it follows.", None),
        ("Yes, it does not follow.", None),
        ("Yes, false", None),
        ("False (Q follows by modus ponens)", None),
        ("Unknown (it may or may not follow)", None),
    ],
)
def test_normalise_verdict(text, verdict):
    assert normalise_verdict(text) == verdict


def test_sql_norm_verdict_reads_what_normalise_verdict_reads():
    """rlvr.verify.scoring.verdict_macro is this module's rule in SQL, on norm_answer's output."""
    from rlvr.verify.scoring import connect

    con = connect()
    texts = ["It doesn’t follow.", "Can’t be determined", "can’t tell", "“True”", "‘false’", "\\textsc{true}"]
    texts += ["\\texttt{No.}", "\\emph{Unknown}", "\\textsc{!true}", "\\neg\\textsc{true}", "\\textsc{\\neg true}", "’true’"]
    texts += ["Yes, it follows.", "True (Q follows by modus ponens)", "The statement is true.", "No, it doesn’t follow."]
    texts += ["It is not true.", "True or false?", "true... or maybe false", "Not sure, maybe true", "True (or false)"]
    texts += ["The premise is true but the conclusion is unknown", "True (not really)", "False (Q follows)", "True (?)"]
    for text in texts:
        got = con.execute("SELECT norm_verdict(norm_answer($t))", {"t": text}).fetchone()[0]
        assert got == normalise_verdict(text), text


def test_verdict_pairs_are_normalised_keys_for_sql():
    keys = [k for k, _ in logic.VERDICT_PAIRS]
    assert len(keys) == len(set(keys))
    assert {v for _, v in logic.VERDICT_PAIRS} == {"true", "false", "unknown"}
    for (
        key,
        verdict,
    ) in logic.VERDICT_PAIRS:  # already in normal form: no whitespace, lower case
        assert key == key.lower() and not any(c.isspace() for c in key)
        assert normalise_verdict(key) == verdict


# ---- the shipped set -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return data_logic.load_records()


def test_every_gold_answer_is_judged_correct(records):
    for r in records:
        meta = r["meta"]
        if meta["kind"] == "propositional":
            v = meta["eliminate"]
            assert check_conclusion(meta["premises"], r["answer"], eliminate=v)[0], r["prompt_id"]
            # nothing copied out of the question is paid: each premise, all those without v joined, all of them
            free = [p for p in meta["premises"] if v not in logic.variables(parse(p))]
            copies = meta["premises"] + [" ∧ ".join(f"({p})" for p in ps) for ps in (free, meta["premises"]) if ps]
            assert not any(check_conclusion(meta["premises"], c, eliminate=v)[0] for c in copies), r["prompt_id"]
            assert f"Eliminate {v}:" in r["prompt"] and v not in logic.variables(parse(r["answer"]))
            assert not entails(meta["premises"], "P ∧ ¬P"), r["prompt_id"]  # consistent premises
            assert meta["canonical_answer"] == canonical(r["answer"])
            assert meta["variables"] == sorted(set().union(*map(logic.variables, map(parse, meta["premises"]))))
        elif meta["kind"] == "tfu":
            assert decide(meta["premises"], meta["statement"]) == r["answer"], r["prompt_id"]
            assert not entails(meta["premises"], "P ∧ ¬P"), r["prompt_id"]
        else:
            follows = build_logic.syllogism_follows(meta["premises"], meta["conclusion"])
            assert r["answer"] == ("true" if follows else "false"), r["prompt_id"]
        assert normalise_verdict(r["answer"]) in (None, r["answer"])


def test_shipped_counts_and_balance(records):
    counts = collections.Counter((r["meta"]["kind"], r["answer"]) for r in records if r["meta"]["kind"] != "propositional")
    assert counts == {
        ("tfu", "true"): 40,
        ("tfu", "false"): 40,
        ("tfu", "unknown"): 40,
        ("syllogism", "true"): 45,
        ("syllogism", "false"): 45,
    }
    assert sum(r["meta"]["kind"] == "propositional" for r in records) == 90
    assert [r["prompt_id"] for r in records] == [f"logic-{i:05d}" for i in range(300)]
    assert len({r["prompt"] for r in records}) == 300
    assert data_logic.DATA_PATH.stat().st_size < 400_000


def test_prompts_end_with_the_answer_instruction(records):
    for r in records:
        assert r["prompt"].endswith(data_logic.INSTRUCTIONS[r["meta"]["kind"]])
        assert "<answer></answer>" in r["prompt"]
        source = r["meta"]["source"]
        if source["generator"].startswith("reasoning_gym"):
            assert (source["version"], source["seed"]) == ("0.1.25", 42)


def test_syllogism_check_on_hand_cases():
    follows = build_logic.syllogism_follows
    assert follows(["All men are mortals", "All greeks are men"], "All greeks are mortals")  # Barbara
    assert follows(["No fish are birds", "All cats are fish"], "No cats are birds")  # Celarent
    assert follows(["All cats are dogs"], "Some dogs are cats")  # existential import
    # undistributed middle: reasoning-gym 0.1.25 labels this one "Yes"
    assert not follows(["All writers are spiders", "Some spiders are lions"], "Some writers are lions")
    assert not follows(["Some cats are not dogs"], "Some dogs are not cats")
    with pytest.raises(ValueError, match="not a categorical statement"):
        follows(["Most cats are dogs"], "All dogs are cats")


def test_rows_fit_the_problems_schema():
    rows = data_logic.generate()
    table = pa.Table.from_pylist(rows, schema=PROBLEMS)
    assert table.num_rows == 300
    assert [r["split"] for r in rows].count("test") == 60
    first = rows[0]
    assert (first["prompt_id"], first["task"], first["tests"], first["sources"]) == (
        "logic-00000",
        "logic",
        None,
        None,
    )
    assert json.loads(first["meta"])["kind"] == "tfu"


def test_splits_are_deterministic_and_disjoint():
    a = data_logic.generate(seed=1, n_train=200, n_test=50)
    assert a == data_logic.generate(seed=1, n_train=200, n_test=50)
    train = {r["prompt_id"] for r in a if r["split"] == "train"}
    test = {r["prompt_id"] for r in a if r["split"] == "test"}
    assert (len(train), len(test), train & test) == (200, 50, set())
    other = data_logic.generate(seed=2, n_train=200, n_test=50)
    assert {r["prompt_id"] for r in other if r["split"] == "test"} != test
    with pytest.raises(ValueError, match="n_train"):
        data_logic.generate(n_train=250, n_test=100)
