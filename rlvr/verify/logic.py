r"""Propositional logic for the logic verifier: parse, canonicalise, decide by truth table.

Responses are untrusted text, so nothing here evaluates them as Python: a small recursive-descent
parser builds a tree, and a truth table decides entailment. A formula is a single upper-case
letter (a variable), a constant ⊤ or ⊥, ("¬", f), or (op, left, right) with op one of ∧ ∨ → ↔.

Spellings accepted (case-insensitive words; LaTeX commands as LaTeX spells them):
    not   ¬  ~  ∼  !  not  \neg  \lnot  \sim
    and   ∧  &  &&  and  ⋀  \land  \wedge
    or    ∨  |  ||  or  ⋁  \lor  \vee
    then  →  ->  =>  ⇒  ⊃  ⟶  ⟹  implies  \to  \rightarrow  \implies  \Rightarrow  \supset
          \longrightarrow  \Longrightarrow
    iff   ↔  <->  <=>  ⇔  ⟷  ⟺  iff  \leftrightarrow  \iff  \Leftrightarrow
          \longleftrightarrow  \Longleftrightarrow
    true  ⊤  \top          false  ⊥  \bot
Brackets are ( ) or [ ], each closed by its own kind; \left and \right before one are dropped,
and so are spacing and style (\, \; \: \! \quad \qquad \displaystyle ...: SPACING; \! is a
negative space, not a negation). Braces are LaTeX's grouping, not brackets: a group, bare or after
a text or font command (\text \mathrm \mathbf ...: FONTS), is read only where it holds one operator
or one operand ('\neg{R}', '\mathrm{R}', '\text{ and }', '\textbf{(Q ∧ R)}'), since
'\neg{Q \lor R}' shows as ¬Q ∨ R but may mean ¬(Q ∨ R) (_group). A whole formula may be wrapped
(unwrap): $...$, $$...$$, \(...\), \[...\], **...**, *...*, `...`, \boxed{...}, a font command
(\text{...}, \mathbf{...}), and end in a full stop. Not read: `v` for or and `^` for and (`^` is
exclusive or in C and Python), ≡ and ⊕ (refused as unknown, not dropped).
Precedence, tightest first: ¬ > ∧ > ∨ > → > ↔. → is right-associative (P → Q → R is
P → (Q → R)); ∧, ∨ and ↔ group to the left. These are the conventions of reasoning-gym's
propositional_logic task (its parse_expr), whose gold answers we check.

Hostile input is bounded: at most MAX_CHARS characters, MAX_VARIABLES distinct variables (a truth
table of 2**12 rows), MAX_DEPTH nested parentheses or negations (the parser recurses) and
MAX_HEIGHT operators on one path of the tree (the table and the canonical text recurse on it: 'P ∧ P
∧ ... ∧ P' is one operator deeper per ∧; a DNF of n terms is about n deep).
Truth tables are bit-parallel: a formula evaluates to one Python int whose bit r is its value in
row r, so a 4096-row table costs one big-int operation per node. A node costs at least two
characters, so MAX_CHARS bounds the work at 2,000 operations on 512-byte ints (milliseconds);
MAX_CHARS is 4,000, not 400, so that a full DNF in LaTeX fits ('(\neg Q \land R \land ...) \lor
...' is about 50 characters a term: 32 terms over five variables take about 1,800).

    from rlvr.verify.logic import check_conclusion
    check_conclusion(["P -> Q", "P"], "Q")   # (True, "correct: 'Q' follows from the premises")
    check_conclusion(["P -> Q", "P -> R", "P ∨ R"], "R", eliminate="P")  # (True, "correct: 'R' is what ...")

Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q
"""

from __future__ import annotations

import re
from functools import lru_cache

Formula = str | tuple  # "P" | "⊤" | "⊥" | ("¬", f) | ("∧" | "∨" | "→" | "↔", f, g)

MAX_CHARS = 4000
MAX_VARIABLES = 12
MAX_DEPTH = 40
MAX_HEIGHT = 500  # _table and to_text take one frame a level: well inside Python's 1,000

NOT, AND, OR, IMPLIES, IFF = "¬", "∧", "∨", "→", "↔"
TRUE, FALSE = "⊤", "⊥"
SPELLINGS = {
    "¬": NOT,
    "~": NOT,
    "!": NOT,
    "not": NOT,
    "\\neg": NOT,
    "\\lnot": NOT,
    "∼": NOT,
    "\\sim": NOT,
    "∧": AND,
    "&": AND,
    "&&": AND,
    "and": AND,
    "⋀": AND,
    "\\land": AND,
    "\\wedge": AND,
    "∨": OR,
    "|": OR,
    "||": OR,
    "or": OR,
    "⋁": OR,
    "\\lor": OR,
    "\\vee": OR,
    "→": IMPLIES,
    "implies": IMPLIES,
    "->": IMPLIES,
    "=>": IMPLIES,
    "⇒": IMPLIES,
    "⊃": IMPLIES,
    "⟶": IMPLIES,
    "⟹": IMPLIES,
    "\\to": IMPLIES,
    "\\rightarrow": IMPLIES,
    "\\implies": IMPLIES,
    "\\Rightarrow": IMPLIES,
    "\\supset": IMPLIES,
    "\\longrightarrow": IMPLIES,
    "\\Longrightarrow": IMPLIES,
    "↔": IFF,
    "iff": IFF,
    "<->": IFF,
    "<=>": IFF,
    "⇔": IFF,
    "⟷": IFF,
    "⟺": IFF,
    "\\leftrightarrow": IFF,
    "\\iff": IFF,
    "\\Leftrightarrow": IFF,
    "\\longleftrightarrow": IFF,
    "\\Longleftrightarrow": IFF,
    "⊤": TRUE,
    "\\top": TRUE,
    "⊥": FALSE,
    "\\bot": FALSE,
}
# connectives spelled as words, read in any case ('P IMPLIES Q'); a word glued to a variable
# ('Pimplies') is one unknown word, and 'implied', 'if ... then' or 'if and only if' are not read
WORDS = ("not", "and", "or", "implies", "iff")
CONSTANTS = (TRUE, FALSE)
CLOSE = {"(": ")", "[": "]"}
# LaTeX that only spaces or styles: dropped ('\\!' is a negative thin space, not a negation).
SPACING = frozenset(
    ("\\,", "\\;", "\\:", "\\!", "\\ ", "\\quad", "\\qquad", "\\enspace", "\\thinspace", "\\displaystyle", "\\textstyle")
)
# Text and font commands: '\\mathrm{R}' is R, '\\text{ and }' is and (a group in braces, _group).
FONTS = frozenset(
    "\\" + name
    for name in (
        "text textrm textnormal textup textbf textit textsf texttt mbox "
        "mathrm mathnormal mathbf mathit mathsf mathtt boldsymbol bm"
    ).split()
)
# Longest symbols first, so that "<->" is not read as "<" then "->"; a LaTeX command is a backslash
# and its letters ('\\negR' is one unknown command, as in LaTeX), or a backslash and one of , ; : ! space.
_TOKEN = re.compile(r"\s*(<->|<=>|->|=>|&&|\|\||\\[A-Za-z]+|\\[,;:! ]|[A-Za-z]+|[¬~∼!∧&∨|→⇒↔⇔⋀⋁⊃⟶⟹⟷⟺⊤⊥()\[\]{}]|\S)")
# Wrappers of a whole formula: (opening, closing); unwrap drops one only when its contents hold no
# other opening or closing of it (and balanced braces for \boxed{), so '$A$ or $B$' stays as it is.
_WRAPS = (
    ("$$", "$$"),
    ("$", "$"),
    ("\\(", "\\)"),
    ("\\[", "\\]"),
    ("**", "**"),
    ("*", "*"),
    ("`", "`"),
    ("\\boxed{", "}"),
    *((font + "{", "}") for font in sorted(FONTS)),
)


def unwrap(text: str) -> str:
    """`text` without the wrappers around the whole of it (_WRAPS) and a final full stop, outermost
    first: '**$P \\land Q$**.' -> 'P \\land Q'. What is inside is left as it is."""
    while True:
        t = text.strip()
        t = t[:-1].rstrip() if t.endswith(".") else t
        for opening, closing in _WRAPS:
            inner = t[len(opening) : len(t) - len(closing)]
            if len(t) < len(opening) + len(closing) or not (t.startswith(opening) and t.endswith(closing)):
                continue
            if _balanced(inner) if opening.endswith("{") else opening not in inner and closing not in inner:
                t = inner
                break
        if t == text:
            return t
        text = t


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


def tokenize(text: str) -> list[tuple[str, int]]:
    """(token, character position) pairs: operators and constants in their unicode form, variables,
    brackets; ValueError on anything else. Spacing and style commands (SPACING) are dropped, and so
    are braces around what _group allows, with a text or font command before them (FONTS)."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"formula too long: {len(text)} characters, at most {MAX_CHARS}")
    tokens: list[tuple[str, int]] = []
    groups: list[tuple[int, int]] = []  # each open '{': where its tokens start, its position
    for m in _TOKEN.finditer(text):
        tok = m.group(1)
        after = text[m.end(1) :].lstrip()[:1]
        if tok in SPELLINGS or tok.lower() in WORDS:
            tokens.append((SPELLINGS.get(tok) or SPELLINGS[tok.lower()], m.start(1)))
        elif tok in SPACING or (tok in FONTS and after == "{"):
            continue  # a font's group is read as a group is
        elif tok == "{":
            groups.append((len(tokens), m.start(1)))
        elif tok == "}":
            if not groups:
                raise ValueError(f"unexpected '}}' at position {m.start(1)}")
            _group(tokens[groups[-1][0] :], groups.pop()[1])
        elif tok in ("\\left", "\\right") and after in ("(", ")", "[", "]"):
            continue  # sizing only: \left( is (
        elif tok in ("(", ")", "[", "]") or (len(tok) == 1 and "A" <= tok <= "Z"):
            tokens.append((tok, m.start(1)))
        elif tok.startswith("\\") and len(tok) > 1:
            raise ValueError(f"unexpected command {tok!r} at position {m.start(1)}")
        else:
            what = "word" if tok.isalpha() else "character"
            hint = " (variables are single upper-case letters)" if tok.isalpha() else ""
            raise ValueError(f"unexpected {what} {tok!r} at position {m.start(1)}{hint}")
    if groups:
        raise ValueError(f"missing '}}' for the '{{' at position {groups[-1][1]}")
    if not tokens:
        raise ValueError("empty formula")
    return tokens


def _group(inner: list[tuple[str, int]], at: int) -> None:
    """Braces are LaTeX's invisible grouping, not brackets: '\\neg{Q \\lor R}' shows as ¬Q ∨ R but
    may mean ¬(Q ∨ R). So a group is read, braces dropped, only where both readings agree: it holds
    one operator ('\\text{ and }'), or one operand: ¬s before a variable, a constant or one bracketed
    formula ('\\neg{R}', '\\mathrm{R}', '{\\neg R}', '\\textbf{(Q ∧ R)}'); ValueError otherwise. A whole
    formula in a font command is unwrapped before this (unwrap)."""
    if len(inner) == 1:
        return
    while len(inner) > 1 and inner[0][0] == NOT:
        inner = inner[1:]
    if len(inner) == 1 and inner[0][0] not in (AND, OR, IMPLIES, IFF):
        return
    if len(inner) > 1 and inner[0][0] in CLOSE:
        depth = 0
        for k, (tok, _) in enumerate(inner):
            depth += (tok in CLOSE) - (tok in (")", "]"))
            if depth == 0:
                if k == len(inner) - 1:
                    return
                break
    what = "nothing" if not inner else "more than one operand or operator"
    raise ValueError(f"the group {{...}} at position {at} holds {what} (braces are no brackets)")


class _Parser:
    """Recursive descent, one method per precedence level (iff < implies < or < and < not)."""

    def __init__(self, tokens: list[tuple[str, int]], length: int):
        self.tokens, self.length, self.i, self.depth = tokens, length, 0, 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def where(self) -> str:
        at = self.tokens[self.i][1] if self.i < len(self.tokens) else self.length
        return f"at position {at}"

    def expect_operand(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ValueError("formula ends too early: expected a variable, ¬ or (")
        if tok in (AND, OR, IMPLIES, IFF, ")", "]"):
            raise ValueError(f"unexpected {tok!r} {self.where()}: expected a variable, ¬ or (")
        self.i += 1
        return tok

    def left_assoc(self, op: str, operand) -> Formula:
        f = operand()
        while self.peek() == op:
            self.i += 1
            f = (op, f, operand())
        return f

    def iff(self) -> Formula:
        return self.left_assoc(IFF, self.implies)

    def implies(self) -> Formula:
        parts = [self.or_()]
        while self.peek() == IMPLIES:
            self.i += 1
            parts.append(self.or_())
        f = parts.pop()
        while parts:  # fold from the right: P → Q → R is P → (Q → R)
            f = (IMPLIES, parts.pop(), f)
        return f

    def or_(self) -> Formula:
        return self.left_assoc(OR, self.and_)

    def and_(self) -> Formula:
        return self.left_assoc(AND, self.not_)

    def not_(self) -> Formula:
        tok = self.expect_operand()
        if tok == NOT:
            return (NOT, self.nested(self.not_))
        if tok in CLOSE:
            f = self.nested(self.iff)
            if self.peek() != CLOSE[tok]:
                raise ValueError(f"missing {CLOSE[tok]!r} {self.where()}")
            self.i += 1
            return f
        return tok  # a variable or a constant: tokenize lets nothing else through

    def nested(self, parse) -> Formula:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ValueError(f"formula nested too deeply: more than {MAX_DEPTH} levels")
        f = parse()
        self.depth -= 1
        return f


def parse(text: str) -> Formula:
    """The formula tree of `text` (unwrapped first); ValueError saying what is wrong and where (a
    position in the unwrapped text)."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"formula too long: {len(text)} characters, at most {MAX_CHARS}")
    text = unwrap(text)
    p = _Parser(tokenize(text), len(text))
    f = p.iff()
    if p.peek() is not None:
        raise ValueError(f"unexpected {p.peek()!r} {p.where()}: expected an operator or the end")
    h = height(f)
    if h > MAX_HEIGHT:
        raise ValueError(f"formula too deep: {h} operators on one path, at most {MAX_HEIGHT}")
    n = len(variables(f))
    if n > MAX_VARIABLES:
        raise ValueError(f"too many variables: {n}, at most {MAX_VARIABLES}")
    return f


def variables(f: Formula) -> set[str]:
    names, todo = set(), [f]
    while todo:  # no recursion: a tree of any height
        g = todo.pop()
        if isinstance(g, str):
            names |= set() if g in CONSTANTS else {g}
        else:
            todo.extend(g[1:])
    return names


def height(f: Formula) -> int:
    """The most operators on one path from the root: 0 for a variable, 2 for ¬(P ∧ Q) (no recursion)."""
    most, todo = 0, [(f, 0)]
    while todo:
        g, h = todo.pop()
        if isinstance(g, tuple):
            most = max(most, h + 1)
            todo.extend((x, h + 1) for x in g[1:])
    return most


def to_text(f: Formula) -> str:
    """Fully parenthesised, unicode operators, no spaces: ¬P, (P∧¬Q), ((P→Q)↔R)."""
    if isinstance(f, str):
        return f
    if f[0] == NOT:
        return NOT + to_text(f[1])
    return f"({to_text(f[1])}{f[0]}{to_text(f[2])})"


def canonical(formula: str) -> str:
    """One string per formula tree, whatever the spelling: 'P & ~(Q|R)' -> '(P∧¬(Q∨R))'.

    Equal strings mean the same tree after precedence and associativity, not logical equivalence
    ('P∧Q' and 'Q∧P' differ): that needs `equivalent`.
    """
    return to_text(parse(formula))


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


# ---- verdicts: true / false / unknown -------------------------------------------------------

# (key, verdict) pairs. A key is a spelling after normalisation: lower case, every whitespace
# character removed, the curly apostrophes VERDICT_APOSTROPHES read as "'" ("Can’t tell" -> "can'ttell"),
# VERDICT_STRIP characters trimmed from the end and VERDICT_LEAD ones from the start
# ("Cannot be determined." -> "cannotbedetermined"; "True!" -> "true", but "!true" is a negation and no
# verdict: issue 19, round 3, where it was paid as true), then one VERDICT_FONTS command around the
# whole of it dropped and trimmed again ("\\textsc{true}" -> "true"; "\\overline{true}" or
# "\\neg\\textsc{true}" are no verdict). The whitespace-free keys are those of the verify SQL's norm_answer macro
# (lower case, whitespace removed, one trailing '.' dropped), so a SQL macro can look norm_answer's
# output up in these pairs. "true"/"false" are about the statement for true-false-unknown
# questions and about "does it follow?" for syllogisms (yes = true, no = false).
VERDICT_APOSTROPHES = "’ʼ"  # U+2019 (also a closing quotation mark) and U+02BC
VERDICT_STRIP = ".!*\"'`“”‘"
VERDICT_LEAD = VERDICT_STRIP.replace("!", "")  # a leading '!' negates
# text commands norm_answer (macros.sql's norm_latex) leaves in place; none strikes or negates
VERDICT_FONTS = ("textsc", "texttt", "textup", "textnormal", "textsl", "emph")
VERDICT_FONT = r"^\\(?:" + "|".join(VERDICT_FONTS) + r")\{([^{}]*)\}$"
VERDICT_PAIRS: tuple[tuple[str, str], ...] = (
    ("true", "true"),
    ("yes", "true"),
    ("valid", "true"),
    ("correct", "true"),
    ("entailed", "true"),
    ("follows", "true"),
    ("itfollows", "true"),
    ("false", "false"),
    ("no", "false"),
    ("invalid", "false"),
    ("incorrect", "false"),
    ("contradicted", "false"),
    ("doesnotfollow", "false"),
    ("itdoesnotfollow", "false"),
    ("doesn'tfollow", "false"),
    ("itdoesn'tfollow", "false"),
    ("unknown", "unknown"),
    ("uncertain", "unknown"),
    ("undetermined", "unknown"),
    ("undecidable", "unknown"),
    ("indeterminate", "unknown"),
    ("unknowable", "unknown"),
    ("cannotbedetermined", "unknown"),
    ("can'tbedetermined", "unknown"),
    ("cannotbeknown", "unknown"),
    ("cannottell", "unknown"),
    ("can'ttell", "unknown"),
    ("notenoughinformation", "unknown"),
    ("insufficientinformation", "unknown"),
    ("neither", "unknown"),
)
VERDICTS: dict[str, str] = dict(VERDICT_PAIRS)

# A verdict in a sentence (red team round 13), read from the same normalised key, so only as a whole
# sentence of one of these forms, whose every word states the one verdict:
#   'Yes, it follows.'  'No, it does not follow.'  (yes/no before a verdict of its own kind)
#   'The statement is true.'  'The conclusion is unknown.'  'It is false.'  'The answer: true'
#   'The conclusion follows.'  'It does not follow.'
#   'True (Q follows by modus ponens)'  (a verdict and a short reason in brackets: VERDICT_REASON)
# Anything else is no verdict: a negation ('It is not true', 'The statement is not true'), a
# question ('True or false?', 'True?'), a hedge ('Not sure, maybe true'), a second verdict ('true...
# or maybe false', 'The premise is true but the conclusion is unknown', 'No, it follows'), or another
# subject ('The premise is true'). The key has no spaces, so the reason's words are not told apart:
# VERDICT_DENIED refuses a reason holding any negation, hedge, question, contrast or verdict word,
# even inside a longer word ('know' in 'unknown', 'or' in 'for'); that refuses some honest reasons,
# never pays a retracted verdict ('True (or false)', 'True (not really)', 'True (I think)').
_SUBJECT = "(?:the)?(?:statement|conclusion|claim|answer|query)|it"
_SENTENCE_WORDS = {  # verdict: (yes/no before it, adjectives after 'is', verbs after the subject)
    "true": ("yes", "true|valid|correct|entailed", "follows|does|doesfollow"),
    "false": ("no", "false|invalid|incorrect|contradicted", "doesnotfollow|doesn'tfollow|doesnot|doesn't"),
    "unknown": (
        "",
        "unknown|uncertain|undetermined|undecidable|indeterminate|unknowable",
        "cannotbedetermined|can'tbedetermined",
    ),
}
VERDICT_REASON = r"(?:\(([^()?]{1,80})\))?"
VERDICT_SENTENCES: tuple[tuple[str, str], ...] = tuple(
    (
        verdict,
        (f"(?:{lead}[,.:;!-]*)?" if lead else "")
        + f"(?:(?:{_SUBJECT})(?:is:?|:)(?:{adjectives})|(?:{_SUBJECT})(?:{verbs})|"
        + "|".join(re.escape(k) for k, v in VERDICT_PAIRS if v == verdict)
        + ")"
        + VERDICT_REASON,
    )
    for verdict, (lead, adjectives, verbs) in _SENTENCE_WORDS.items()
)
_DENIED = (
    "no|n't|never|nor|either|or|true|false|yes|unknown|certain|determin|decid|valid|correct|wrong|contra|negat|"
    "refut|disprov|fail|maybe|perhaps|possib|probab|likel|might|may|could|should|guess|think|believ|suppos|sure|"
    "assum|unless|if|but|however|though|actual|rather|instead|except|kidding|joke|opposite|revers|invers|"
    "[~¬!∼/|%\\d]"
)
VERDICT_DENIED: dict[str, str] = {"true": _DENIED, "false": _DENIED + "|follow|entail", "unknown": _DENIED + "|follow|entail"}


def normalise_verdict(text: str | None) -> str | None:
    """'Yes.' -> 'true', '**False**' -> 'false', 'Cannot be determined' -> 'unknown',
    'It doesn’t follow.' -> 'false', '\\textsc{true}' -> 'true', 'maybe' -> None (not a verdict).
    The keys of VERDICT_PAIRS, and the sentences of VERDICT_SENTENCES whose reason in brackets, if
    any, VERDICT_DENIED lets through ('Yes, it follows.', 'The statement is true.', 'True (Q follows
    by modus ponens)'), are the whole list."""
    if text is None:
        return None
    key = "".join(text.lower().split()).translate({ord(c): "'" for c in VERDICT_APOSTROPHES})
    key = re.sub(VERDICT_FONT, r"\1", key.lstrip(VERDICT_LEAD).rstrip(VERDICT_STRIP))
    key = key.lstrip(VERDICT_LEAD).rstrip(VERDICT_STRIP)
    if key in VERDICTS:
        return VERDICTS[key]
    for verdict, sentence in VERDICT_SENTENCES:
        m = re.fullmatch(sentence, key)
        if m and not re.search(VERDICT_DENIED[verdict], m.group(1) or ""):
            return verdict
    return None
