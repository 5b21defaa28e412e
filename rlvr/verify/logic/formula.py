r"""Propositional formulas for the logic verifier: parse, canonicalise, bound.

Responses are untrusted text, so nothing here evaluates them as Python: a small recursive-descent
parser builds a tree (the truth tables that decide on it: tables.py). A formula is a single upper-case
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
∧ ... ∧ P' is one operator deeper per ∧; a DNF of n terms is about n deep). MAX_CHARS is 4,000,
not 400, so that a full DNF in LaTeX fits ('(\neg Q \land R \land ...) \lor ...' is about 50
characters a term: 32 terms over five variables take about 1,800).

Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q
"""

from __future__ import annotations

import re

Formula = str | tuple  # "P" | "⊤" | "⊥" | ("¬", f) | ("∧" | "∨" | "→" | "↔", f, g)

MAX_CHARS = 4000
MAX_VARIABLES = 12
MAX_DEPTH = 40
MAX_HEIGHT = 500  # tables._table and to_text take one frame a level: well inside Python's 1,000

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
