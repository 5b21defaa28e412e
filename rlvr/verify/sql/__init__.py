"""The SQL tier of verification: the statements the verify stage runs (answer extraction,
normalisation, exact and numeric decisions, citations, reward composition and group advantages),
one statement per .sql file; `load(name)` reads one. Values are bound with $name parameters,
never formatted into the text.

It decides what SQL can decide exactly (numbers, strings, verdicts, citation spans); rows it
cannot decide go to a Python tier (math, code, logic), never to a guess.

What it does not defend: the last-number reading of an untagged response is a heuristic over the
text around that number (hedges, denials, lists, a value-changing suffix: verify.sql's header), so a
policy can find phrasings it misses; set verify.extraction = "strict" for a task whose model tags its
answer. Units are dropped, not compared ('5 inches' for '5 cm'); strings are equal after case,
whitespace and LaTeX wrappers are normalised away, so a currency or degree sign inside a word is
dropped too ('Pa€ris'); verify.numeric_tolerance, when set, pays any value within it. For symbolic
golds it refuses the answers math-verify would pay that are not in the gold's form (unevaluated or
unsimplified forms, operations the gold has none of, more values than the gold's form by more than
one, decimals, a letter in another case, a set for a tuple); these are heuristics over the text, so
a policy can still find an equal expression they miss. Every other answer goes to math-verify
(rlvr.verify.math), whose equivalence it trusts. tests/data/redteam.json lists each attack the
tier does defend."""

from importlib.resources import files


def load(name: str) -> str:
    return (files(__package__) / f"{name}.sql").read_text()
