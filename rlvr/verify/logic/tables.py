r"""Truth tables for the logic verifier: entailment, true/false/unknown, and the conclusion checks
(`check_conclusion`) on formulas that formula.py parsed.

Truth tables are bit-parallel: a formula evaluates to one Python int whose bit r is its value in
row r, so a 4096-row table costs one big-int operation per node. A node costs at least two
characters, so MAX_CHARS bounds the work at 2,000 operations on 512-byte ints (milliseconds).

    check_conclusion(["P -> Q", "P"], "Q")   # (True, "correct: 'Q' follows from the premises")
    check_conclusion(["P -> Q", "P -> R", "P ∨ R"], "R", eliminate="P")  # (True, "correct: 'R' is what ...")

Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q
"""

from __future__ import annotations

from functools import lru_cache

from rlvr.verify.logic.formula import AND, FALSE, IFF, IMPLIES, MAX_VARIABLES, NOT, OR, TRUE, Formula, parse, to_text, variables


@lru_cache(maxsize=MAX_VARIABLES + 1)
def _columns(n: int) -> tuple[int, ...]:
    """Truth-table columns for n variables: bit r of column i is variable i's value in row r.
    Rows count up in binary with the first variable most significant (P=0 Q=0, P=0 Q=1, ...)."""
    return tuple(sum(1 << r for r in range(1 << n) if (r >> (n - 1 - i)) & 1) for i in range(n))


def _table(f: Formula, column: dict[str, int], full: int) -> int:
    if isinstance(f, str):
        return full if f == TRUE else 0 if f == FALSE else column[f]
    a = _table(f[1], column, full)
    if f[0] == NOT:
        return full & ~a
    b = _table(f[2], column, full)
    return {
        AND: a & b,
        OR: a | b,
        IMPLIES: (full & ~a) | b,
        IFF: full & ~(a ^ b),
    }[f[0]]


class _Table:
    """The truth table of a set of variables: each formula evaluates to one int, bit r its value in row r."""

    def __init__(self, names: list[str]):
        if len(names) > MAX_VARIABLES:
            raise ValueError(f"too many variables: {len(names)}, at most {MAX_VARIABLES}")
        self.names = names
        self.column = dict(zip(names, _columns(len(names)), strict=True))
        self.full = (1 << (1 << len(names))) - 1

    @classmethod
    def over(cls, *formulas: Formula) -> _Table:
        return cls(sorted(set().union(*map(variables, formulas))))

    def of(self, f: Formula) -> int:
        return _table(f, self.column, self.full)

    def all_of(self, formulas: list[Formula]) -> int:
        rows = self.full
        for f in formulas:
            rows &= self.of(f)
        return rows

    def assignment(self, r: int) -> dict[str, bool]:
        """Row r's value of each variable (the first variable is the most significant bit)."""
        n = len(self.names)
        return {v: bool((r >> (n - 1 - i)) & 1) for i, v in enumerate(self.names)}

    def first(self, rows: int, *, without: str = "") -> str:
        """The first row of a non-empty set, as 'P=0 Q=1', leaving out the variable `without`."""
        r = (rows & -rows).bit_length() - 1  # lowest set bit = first such row
        return " ".join(f"{v}={int(x)}" for v, x in self.assignment(r).items() if v != without)

    def exists(self, rows: int, name: str) -> int:
        """The rows where some value of `name` (the others as they are) is in `rows`: ∃name."""
        col = self.column[name]
        step = 1 << (len(self.names) - 1 - self.names.index(name))  # row distance between name=0 and name=1
        return rows | ((rows & col) >> step) | ((rows & ~col & self.full) << step)


def _counterexample(premises: list[Formula], conclusion: Formula) -> dict[str, bool] | None:
    """The first row (in truth-table order) where every premise holds and the conclusion fails."""
    t = _Table.over(conclusion, *premises)
    rows = t.all_of(premises) & ~t.of(conclusion)
    return t.assignment((rows & -rows).bit_length() - 1) if rows else None


def entails(premises: list[str], conclusion: str) -> bool:
    """True iff the conclusion holds in every row where all premises hold (truth table)."""
    return _counterexample([parse(p) for p in premises], parse(conclusion)) is None


def is_tautology(formula: str) -> bool:
    return entails([], formula)


def equivalent(a: str, b: str) -> bool:
    return entails([a], b) and entails([b], a)


def decide(premises: list[str], statement: str) -> str:
    """ "true" if the premises entail the statement, "false" if they entail its negation, else
    "unknown". Inconsistent premises entail everything, so they give "true"."""
    ps, s = [parse(p) for p in premises], parse(statement)
    if _counterexample(ps, s) is None:
        return "true"
    if _counterexample(ps, (NOT, s)) is None:
        return "false"
    return "unknown"


def check_conclusion(premises: list[str], answer: str, *, eliminate: str = "") -> tuple[bool, str]:
    """Is `answer` a conclusion of the premises that the question pays? (correct, one-line reason).

    Always: it parses and uses only the premises' variables. Then one of two rules:

    - `eliminate` names a variable (the shipped set): the answer must not mention it and must be
      equivalent to what the premises say about the other variables (∃eliminate. premises, by
      truth table). The answer is unique up to equivalence, so neither a copied premise nor a
      weaker or stronger formula is paid.
    - No `eliminate` (the open question "what follows?"): the answer must be entailed, not a
      tautology (those follow from anything; reasoning-gym gives them 0.25), not equivalent to
      premises as given (one, or several joined by ∧), and, with two or more premises, not
      entailed by one premise alone (that restates or weakens it). This rule cannot be exact: an
      entailed formula is a conclusion, and a policy can still weaken two premises joined by ∧
      ("(P1 ∧ P2) ∨ R"). Questions that must not be gamed name a variable to eliminate.

    Premises that do not parse, or an `eliminate` that is not among their variables, are a data
    error and raise ValueError.
    """
    ps = [parse(p) for p in premises]
    allowed = set().union(*map(variables, ps))
    if eliminate and eliminate not in allowed:
        raise ValueError(f"eliminate {eliminate!r} is not among the premises' variables {', '.join(sorted(allowed))}")
    try:
        f = parse(answer)
    except ValueError as err:
        return False, f"unparsable: {err}"
    shown = to_text(f)
    if eliminate and eliminate in variables(f):
        return False, f"wrong: {shown!r} mentions {eliminate}, which the question eliminates"
    extra = variables(f) - allowed
    if extra:
        return False, (
            f"wrong: {shown!r} uses {', '.join(sorted(extra))}, not among the premises' variables {', '.join(sorted(allowed))}"
        )
    t = _Table.over(f, *ps)
    held, says = t.all_of(ps), t.of(f)
    if held & ~says:
        return False, f"wrong: {shown!r} does not follow from the premises (counterexample {t.first(held & ~says)})"
    if eliminate:
        extra_rows = says & ~t.exists(held, eliminate)
        if extra_rows:
            return False, (
                f"weaker: {shown!r} follows but also holds at {t.first(extra_rows, without=eliminate)}, where no value "
                f"of {eliminate} makes every premise true; the answer must say all the premises say without {eliminate}"
            )
        return True, f"correct: {shown!r} is what the premises say once {eliminate} is eliminated"
    if says == t.full:
        return False, f"trivial: {shown!r} is a tautology, true whatever the premises say"
    implied = [i for i, p in enumerate(ps) if not says & ~t.of(p)]  # the premises the answer entails
    if implied and not t.all_of([ps[i] for i in implied]) & ~says:
        return False, f"restated: {shown!r} is {_premises_text(implied)} as given; a conclusion must derive something"
    alone = next((i for i, p in enumerate(ps) if not t.of(p) & ~says), None) if len(ps) > 1 else None
    if alone is not None:
        return False, (
            f"restated: {shown!r} follows from premise {alone + 1} alone (it weakens it); a conclusion must combine premises"
        )
    return True, f"correct: {shown!r} follows from the premises"


def _premises_text(indices: list[int]) -> str:
    """[0] -> 'premise 1', [0, 2] -> 'premises 1 and 3 together'."""
    numbers = [str(i + 1) for i in indices]
    if len(numbers) == 1:
        return f"premise {numbers[0]}"
    return f"premises {', '.join(numbers[:-1])} and {numbers[-1]} together"


def eliminated(premises: list[str], eliminate: str) -> tuple[list[str], list[dict[str, bool]]]:
    """What the premises say once `eliminate` is gone: the other variables, and every assignment
    of them for which some value of `eliminate` makes every premise true (truth-table order).
    The generator builds a gold formula from these rows; check_conclusion pays any equivalent one."""
    ps = [parse(p) for p in premises]
    t = _Table.over(*ps)
    if eliminate not in t.names:
        raise ValueError(f"eliminate {eliminate!r} is not among the premises' variables {', '.join(t.names)}")
    rows = t.exists(t.all_of(ps), eliminate) & ~t.column[eliminate]  # one row per assignment: eliminate = 0
    keep = [v for v in t.names if v != eliminate]
    models = [t.assignment(r) for r in range(1 << len(t.names)) if (rows >> r) & 1]
    return keep, [{v: m[v] for v in keep} for m in models]
