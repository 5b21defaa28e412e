"""Logic problems with checkable answers: 300 rows of task "logic" in three kinds (meta "kind").

- "tfu" (120, 40 per answer): premises in plain English about named propositions ("If it
  rains, then the ground is wet."); the question "Is it true, false, or unknown that ...?";
  answer true/false/unknown, computed by rlvr.verify.logic.decide. Our own generator, seed TFU_SEED.
- "propositional" (90): the premises of reasoning-gym's propositional_logic (default config, seed
  RG_SEED), formulas over P, Q, R, ...; the question names one variable to eliminate, and the
  answer is what the premises say about the others (∃ that variable, by truth table), unique up to
  equivalence. The gold is the shortest of sympy's minimal DNF and CNF of it (sympy comes with
  math-verify), and any equivalent formula is paid (rlvr.verify.logic.check_conclusion,
  `eliminate`). reasoning-gym's own question, "give one conclusion that follows", pays a copied
  premise, so its golds are not used. Kept only when the premises are consistent and some variable
  is worth eliminating (`elimination_target`).
- "syllogism" (90, 45 yes / 45 no): reasoning-gym's syllogism (invalid_ratio 0.5, seed RG_SEED);
  answer "true" (it follows) or "false". Kept only when our own check (`syllogism_follows`, every
  model of the three terms' Venn regions) agrees with the generator's Yes/No: reasoning-gym 0.1.25
  does not check the middle term's distribution and calls e.g. "All A are B, Some B are C, so
  Some A are C" valid.

This module builds data/logic.jsonl, which is shipped: `python -m rlvr.data.generators.logic` (needs
`pip install reasoning-gym==0.1.25`, the `data` extra) rewrites it byte for byte; every row's meta
records its source, version, seed and index. Running rlvr never imports this module: rlvr.data.logic
reads the jsonl. Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q (rebuilds the file when reasoning-gym is there)
"""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import random
import re
from pathlib import Path

from rlvr.data.logic import DATA_PATH, INSTRUCTIONS, TASK

from rlvr.verify import logic

COUNTS = {"tfu": 120, "propositional": 90, "syllogism": 90}
TFU_SEED = 3
RG_VERSION = "0.1.25"
RG_SEED = 42

# ---- tfu: our own generator ------------------------------------------------------------------

ATOMS = [  # (positive, negative) phrasings of one proposition
    ("it rains", "it does not rain"),
    ("the ground is wet", "the ground is not wet"),
    ("the alarm rings", "the alarm does not ring"),
    ("Alice is at home", "Alice is not at home"),
    ("the door is locked", "the door is not locked"),
    ("the light is on", "the light is off"),
    ("the train is late", "the train is not late"),
    ("Bob takes the bus", "Bob does not take the bus"),
    ("the shop is open", "the shop is closed"),
    ("the cat is hungry", "the cat is not hungry"),
    ("the printer works", "the printer does not work"),
    ("the meeting is cancelled", "the meeting is not cancelled"),
    ("Carol wins the game", "Carol does not win the game"),
    ("the road is icy", "the road is not icy"),
    ("the battery is charged", "the battery is not charged"),
    ("the garden is watered", "the garden is not watered"),
]
# shape: (weight, formula template, English template); {a} {b} are literals
PREMISE_SHAPES = {
    "fact": (1, "{a}", "{A}."),
    "if": (4, "({a} → {b})", "If {a}, then {b}."),
    "or": (2, "({a} ∨ {b})", "Either {a} or {b}, or both."),
    "and": (1, "({a} ∧ {b})", "{A}, and {b}."),
    "iff": (1, "({a} ↔ {b})", "{A} if and only if {b}."),
    "nand": (1, "¬({a} ∧ {b})", "It is not the case that both {a} and {b}."),
}
STATEMENT_SHAPES = {
    "fact": (6, "{a}", "{a}"),
    "and": (1, "({a} ∧ {b})", "{a} and {b}"),
    "or": (1, "({a} ∨ {b})", "{a} or {b} (or both)"),
}


def _fill(shapes: dict, rng: random.Random, names: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """A random (formula, English) of one of `shapes` over two distinct random literals."""
    kinds = list(shapes)
    kind = rng.choices(kinds, weights=[shapes[k][0] for k in kinds])[0]
    _, formula, text = shapes[kind]
    lits = [(v, rng.random() < 0.6) for v in rng.sample(sorted(names), 2)]
    f = {k: v if pos else f"¬{v}" for k, (v, pos) in zip("ab", lits, strict=True)}
    t = {k: names[v][0 if pos else 1] for k, (v, pos) in zip("ab", lits, strict=True)}
    t |= {k.upper(): s[0].upper() + s[1:] for k, s in t.items()}
    return formula.format(**f), text.format(**t)


def make_tfu(rng: random.Random, target: str) -> dict:
    """Draw problems until one's answer is `target`; its premises are consistent, it mentions
    only propositions the premises use, and the statement is not itself a premise."""
    while True:
        atoms = rng.sample(ATOMS, rng.choice([3, 4]))
        names = dict(zip("PQRS", atoms, strict=False))
        premises = [_fill(PREMISE_SHAPES, rng, names) for _ in range(rng.randint(2, 4))]
        statement, said = _fill(STATEMENT_SHAPES, rng, names)
        formulas = [f for f, _ in premises]
        used = set().union(*(logic.variables(logic.parse(f)) for f in formulas))
        if (
            logic.variables(logic.parse(statement)) <= used
            and not logic.entails(formulas, "(P ∧ ¬P)")  # consistent
            and logic.canonical(statement) not in map(logic.canonical, formulas)
            and logic.decide(formulas, statement) == target
        ):
            break
    lines = "\n".join(f"- {text}" for _, text in premises)
    prompt = (
        f"Assume the following statements are all true:\n{lines}\n\n"
        f"Is it true, false, or unknown that {said}? Answer true if the statements guarantee "
        "it, false if they guarantee the opposite, and unknown if they leave it open.\n\n" + INSTRUCTIONS["tfu"]
    )
    meta = {
        "kind": "tfu",
        "premises": formulas,
        "statement": statement,
        "names": {v: names[v][0] for v in sorted(used)},
        # the name it had when data/logic.jsonl was built; kept so that the build reproduces the shipped file
        "source": {"generator": "data.logic.make_tfu", "seed": TFU_SEED},
    }
    return {"prompt": prompt, "answer": target, "meta": meta}


def build_tfu(n: int) -> list[dict]:
    rng = random.Random(TFU_SEED)
    targets = ["true", "false", "unknown"]
    return [make_tfu(rng, targets[i % 3]) for i in range(n)]


# ---- propositional: reasoning-gym's premises, one variable to eliminate ------------------------


def elimination_target(premises: list[str]) -> str | None:
    """The first variable (in name order) worth eliminating, or None.

    Worth it: another variable remains; the premises say something about the rest (what is left
    is not a tautology); and copying out the premises that do not mention it, all of them joined
    by ∧, does not already say it (else a copied premise would be the answer)."""
    names = sorted(set().union(*(logic.variables(logic.parse(p)) for p in premises)))
    for v in names:
        keep, models = logic.eliminated(premises, v)
        if not keep or len(models) == 2 ** len(keep):
            continue
        copied = " ∧ ".join(f"({p})" for p in premises if v not in logic.variables(logic.parse(p)))
        if not copied or not logic.check_conclusion(premises, copied, eliminate=v)[0]:
            return v
    return None


def formula_text(expr) -> str:
    """A sympy boolean expression in the shipped spelling: ¬Q, (Q ∨ ¬R) ∧ S; operands in text order."""
    import sympy

    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, sympy.Not):
        inner = formula_text(expr.args[0])
        return "¬" + (inner if isinstance(expr.args[0], sympy.Symbol) else f"({inner})")
    op = " ∧ " if isinstance(expr, sympy.And) else " ∨ "
    parts = sorted((formula_text(a), a) for a in expr.args)
    return op.join(t if isinstance(a, sympy.Symbol | sympy.Not) else f"({t})" for t, a in parts)


def gold_formula(keep: list[str], models: list[dict[str, bool]]) -> str:
    """The shortest of sympy's minimal DNF and CNF with exactly these models over `keep`."""
    import sympy

    symbols = sympy.symbols(keep)
    minterms = [[int(m[v]) for v in keep] for m in models]
    forms = [formula_text(sympy.SOPform(symbols, minterms)), formula_text(sympy.POSform(symbols, minterms))]
    return min(forms, key=lambda t: (len(t), t))


def propositional_record(item: dict) -> dict | None:
    """A reasoning-gym propositional_logic item's premises, with a variable to eliminate and the
    gold that says what the premises say about the others; None if its premises are inconsistent
    or no variable is worth eliminating (elimination_target). reasoning-gym's own gold, any one
    conclusion that follows, is not used: a copied premise is such a conclusion."""
    premises = item["metadata"]["premises"]
    if logic.entails(premises, "(P ∧ ¬P)"):
        return None
    target = elimination_target(premises)
    if target is None:
        return None
    keep, models = logic.eliminated(premises, target)
    gold = gold_formula(keep, models)
    assert logic.check_conclusion(premises, gold, eliminate=target)[0], (premises, target, gold)
    names = sorted(set().union(*(logic.variables(logic.parse(p)) for p in premises)))
    listed = "\n".join(f"{i}. {p}" for i, p in enumerate(premises, 1))
    rest = ", ".join(keep)
    prompt = (
        f"Premises over the propositional variables {', '.join(names)}:\n{listed}\n\n"
        f"Eliminate {target}: give one formula over {rest} alone that says everything the premises say "
        f"about {rest}. It must be true exactly when some value of {target} makes every premise true. "
        "Any equivalent formula counts; a weaker one (such as a premise copied out) or a stronger one "
        f"does not, nor does one that mentions {target}.\n\n" + INSTRUCTIONS["propositional"]
    )
    meta = {
        "kind": "propositional",
        "premises": premises,
        "variables": names,
        "eliminate": target,
        "canonical_answer": logic.canonical(gold),
        "source": _rg_source("propositional_logic", item["metadata"]["source_index"]),
    }
    return {"prompt": prompt, "answer": gold, "meta": meta}


def _rg_source(name: str, index: int) -> dict:
    return {
        "generator": f"reasoning_gym.{name}",
        "version": RG_VERSION,
        "seed": RG_SEED,
        "index": index,
    }


# ---- syllogism: reasoning-gym's items, checked on every Venn model ----------------------------

_CATEGORICAL = re.compile(r"^(All|No|Some) (\w+) are (not )?(\w+)$")


def categorical(text: str) -> tuple[str, str, str]:
    """'Some cats are not dogs' -> ('some_not', 'cats', 'dogs')."""
    m = _CATEGORICAL.match(text)
    if m is None or (m[3] and m[1] != "Some"):
        raise ValueError(f"not a categorical statement: {text!r}")
    return ("some_not" if m[3] else m[1].lower()), m[2], m[4]


def _holds(statement: tuple[str, str, str], inhabited: list[frozenset]) -> bool:
    q, s, p = statement
    if q == "all":
        return not any(s in r and p not in r for r in inhabited)
    if q == "no":
        return not any(s in r and p in r for r in inhabited)
    if q == "some":
        return any(s in r and p in r for r in inhabited)
    return any(s in r and p not in r for r in inhabited)  # some_not


def syllogism_follows(premises: list[str], conclusion: str) -> bool:
    """Does the conclusion hold in every model of the premises? A model says which regions of
    the terms' Venn diagram have members; every term has members (Aristotelian existential
    import, as reasoning-gym assumes: 'All A are B' gives 'Some B are A')."""
    statements = [categorical(t) for t in [*premises, conclusion]]
    terms = sorted({t for _, s, p in statements for t in (s, p)})
    regions = [frozenset(c) for k in range(1, len(terms) + 1) for c in itertools.combinations(terms, k)]
    for mask in range(1 << len(regions)):
        inhabited = [r for i, r in enumerate(regions) if (mask >> i) & 1]
        if not all(any(t in r for r in inhabited) for t in terms):
            continue
        if all(_holds(s, inhabited) for s in statements[:-1]) and not _holds(statements[-1], inhabited):
            return False
    return True


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:]


def syllogism_record(item: dict) -> dict | None:
    md = item["metadata"]
    premises = [md["premise1"], md["premise2"]]
    follows = syllogism_follows(premises, md["conclusion"])
    if follows != (item["answer"] == "Yes"):
        return None
    prompt = (
        f"Consider these statements:\n1. {premises[0]}\n2. {premises[1]}\n\n"
        f"Does it logically follow that {_lower_first(md['conclusion'])}? Assume every group mentioned has "
        "at least one member.\n\n" + INSTRUCTIONS["syllogism"]
    )
    meta = {
        "kind": "syllogism",
        "premises": premises,
        "conclusion": md["conclusion"],
        "form": md["type"],  # "syllogism" | "inversion"
        "source": _rg_source("syllogism", md["source_index"]),
    }
    return {"prompt": prompt, "answer": "true" if follows else "false", "meta": meta}


# ---- build ---------------------------------------------------------------------------------


def _reasoning_gym(name: str, **config):
    try:
        import reasoning_gym
    except ImportError as err:
        raise ImportError(f"building needs reasoning-gym: pip install 'reasoning-gym=={RG_VERSION}'") from err
    # reasoning_gym.__version__ still says 0.1.19 in 0.1.25: ask the installed distribution
    found = importlib.metadata.version("reasoning-gym")
    if found != RG_VERSION:
        raise ImportError(f"reasoning-gym {found} is installed; the shipped set needs {RG_VERSION}")
    return reasoning_gym.create_dataset(name, seed=RG_SEED, size=SCAN, **config)


SCAN = 2000  # reasoning-gym items scanned for each kind


def build_propositional(n: int) -> list[dict]:
    """The first n items (in index order) that propositional_record keeps."""
    ds = _reasoning_gym("propositional_logic")
    kept = [r for r in map(propositional_record, ds) if r is not None][:n]
    if len(kept) < n:
        raise ValueError(f"only {len(kept)} usable propositional items in {SCAN}; raise SCAN")
    return kept


def build_syllogism(n: int) -> list[dict]:
    """The first n // 2 items that follow and n // 2 that do not, in index order."""
    ds = _reasoning_gym("syllogism", invalid_ratio=0.5)
    kept, quota = [], {"true": n // 2, "false": n - n // 2}
    for rec in map(syllogism_record, ds):
        if rec is not None and quota[rec["answer"]] > 0:
            quota[rec["answer"]] -= 1
            kept.append(rec)
    if any(quota.values()):
        raise ValueError(f"syllogisms short of {quota} in {SCAN} items; raise SCAN")
    return kept


def build(path: Path = DATA_PATH) -> list[dict]:
    """Generate every record and write them, one JSON object a line, to `path`."""
    records = build_tfu(COUNTS["tfu"]) + build_propositional(COUNTS["propositional"]) + build_syllogism(COUNTS["syllogism"])
    lines = []
    for i, rec in enumerate(records):
        rec = {"prompt_id": f"logic-{i:05d}", "task": TASK} | rec
        lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return records


if __name__ == "__main__":
    built = build()
    print(f"wrote {len(built)} problems to {DATA_PATH}")
