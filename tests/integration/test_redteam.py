"""Red team: hostile responses against every verifier tier, each with the reward it must get.

tests/data/redteam.json holds the corpus: {tier, attack, problem, response, reward[, citations_supported]}
for the code tier (HumanEval-style asserts and stdin/stdout; a problem named "humaneval-NNN" is the
shipped HumanEval row), the math tier (SQL), retrieval citations and logic formulas (truth tables). Every entry is scored
by the real verify pass (rlvr.verify.score_with_stats: DuckDB, the sandbox) under the default config; a wrong response
must get 0 for correctness, a correct one keeps its reward. The shipped golds of every non-code task keep theirs too
(HumanEval's 164 canonical solutions and the stdio references: tests/integration/test_humaneval.py,
tests/integration/test_stdio.py).

tests/data/refused-by-contract.json and paid-by-contract.json hold the entries whose reward the answer contract
(README "The answer contract") sets: right answers in a form it does not list, which it refuses, and attacks it pays
because a marker holds the right value (the words before it are not read). Each must get the reward and reason it states.

tests/data/redteam-open.json holds cases confirmed misjudged that are not defended yet, each with its problem inline
and the reward it should get. It is not scored here: it is where the next round starts, and a case moves to
redteam.json with its defence (a code case's problem then built from its prompt by _prompted, as the code tier reads
it). Its kinds:
- math, forms of a right answer the reader refuses: a value in words beside its number ('12 (or twelve)'), markdown
  tables, '½', 'MM' for millions, a tagged '12 min', a unit in its own span ('$4\\pi$ m$^2$'), set-builder notation
  for an interval, an approximation after an exact value ('1/3 ≈ 0.333'), a span after the answer ('where $x$');
- math, text after the answer that changes or hedges it: a correction written as a computation ('Actually, 13 - 1 =
  12.'), methods that disagree, text after a box ('\\boxed{12}!', '\\boxed{12}x'), a hedge or condition after the
  stated number ('12 I think', '12. But it could have been 13'), a note or a bracket after the answer;
- math, the stated-answer rule (a stated answer, then a check of it): checks it does not pass over ('Does 3 × 7 =
  21? Yes.', a check of two computations, a check in another unit), a variable's value then a check, a check that
  uses the stated number as an operand, and its refusals of right answers ('Actually, the answer is 12, not 13');
- retrieval: a denial inside <cite>;
- code: values that cannot cross to the tests' process (a lambda or generator, a Counter arriving as a dict, a
  dataclass instance, identity `r is xs`, instances of stubs the tests build themselves), output captured with
  redirect_stdout, state a prompt helper keeps, prompt helpers that name a stub or run after the solution, a decorated
  stub whose registry the tests read, an example shown as `f(1) is 2`, and a stdio line's leading spaces, which the
  comparison strips.

Run: .venv/bin/python -m pytest -q tests/integration/test_redteam.py   (the code part needs the sandbox: root,
or an ordinary user with unprivileged user namespaces; ~20 s on 2 cores)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rlvr.data import arithmetic, humaneval, logic, retrieval

from rlvr.config import VerifySection
from rlvr.verify import score_with_stats
from rlvr.verify.code import SandboxError, io_tests_json, sandbox_mode
from rlvr.verify.code import prompt as code_prompt
from rlvr.verify.code.prompt_text import prompt_code
from tests.helpers import DATA
from tests.helpers.verify_inputs import write_inputs

CORPUS = json.loads((DATA / "redteam.json").read_text(encoding="utf-8"))
# the answer contract (README "The answer contract"): right answers whose form it refuses, and
# attacks it pays (a marker that holds the right value; the words before it are not read), each with the
# reward and reason it gets now (moved out of redteam.json by scripts/reclassify_corpus.py)
REFUSED = json.loads((DATA / "refused-by-contract.json").read_text(encoding="utf-8"))
PAID = json.loads((DATA / "paid-by-contract.json").read_text(encoding="utf-8"))
FERRY = [
    (
        "The ferry across the Lune first ran in 1829 from Orlesby. The ferry carried 29 passengers on its first "
        "crossing of the Lune. Its captain was Maren Colt."
    ),
    "The mill at Tavenby burned down in 1871 and was rebuilt by 1880.",
]
SURVEY = [  # sentence ends that are not '. ' and full stops that are not sentence ends
    'Dr. Marr reached St. Brede in 1902. The river ran 3.5 metres deep at the old ford. The keeper told her, "The ford '
    'is closed to carts." Its keeper then was Tobin Hale, who had kept it since 1890.',
    "The mill at Tavenby burned down in 1871! Was it rebuilt? It was, by Orla Fenn in 1880.",
]
LEDGER = [  # one 49-word sentence without a full stop
    "Stores received at the Haskebrook depot in the winter of 1877 included forty barrels of salt, twelve crates of "
    "lamp oil, nine coils of rope, six sacks of seed, three anvils, two dozen axes and 417 pounds of nails, all "
    "entered in the ledger by the clerk Aldo Pree"
]
TOLL = [  # the gold 29 and 3.5 inside other numbers (a decimal, a thousands group, a range)
    (
        "The ferry across the Lune first ran in 1829 from Orlesby. The ferry carried 29 passengers on its first "
        "crossing of the Lune. The toll for a cart on the ferry was 2.29 shillings in its first year."
    ),
    (
        "The mill at Tavenby employed 29,500 hands across the whole county by the year 1871. The mill's chief engineer "
        "was the 29-year-old Orla Fenn of Brede. Its wheel turned 29.5 times a minute. It cost 1,029 pounds to build."
    ),
]
DEPTH = [
    "The river ran 3.5 metres deep at the old ford. Scores of 3, 5 and 8 were recorded at the Brede fair that summer. "
    "The mail ferry ran 3-5 times a week in the winter months. The carrier called 3\u20135 times a month in the dry season."
]
DEPOT = [  # a 39-word sentence whose decimals and thousands groups are one word each
    "Stores received at the Haskebrook depot in 1877 included 3.5 tons of salt, 1,250 pounds of oil, 9 coils of rope, "
    "6 sacks of seed, 3 anvils, 2.5 dozen axes and 417 pounds of nails, entered by Aldo Pree.",
    "The depot closed in 1901.",
]
MILL_ROUTE = [  # sentence ends after an abbreviation and a one-letter word; an initial that is none
    "The mill at Tavenby burned down in 1871 and was sold to Fenn Bros. It reopened in 1880. Its wheel was cast in Leeds.",
    "The ferry ran on Route B. It carried 29 passengers.",
    "The new wheel was fitted by Orla B. Fenn of Brede in 1880.",
]
LINES = [
    "Ferry: the Lune crossing\nCaptain: Maren Colt of Orlesby\nPassengers on the first crossing: 29\nFirst sailing: 1829 from the Orlesby slipway"
]
NBSP = [
    "The ferry across the Lune first ran in 1829 from Orlesby.\u00a0The ferry carried 29\u00a0passengers on its first crossing of the Lune."
]
TOKENS = [  # the gold 29 inside other numbers (a time, a date, a fraction, a space-grouped thousand, a sign)
    "The ferry carried 29 passengers on its first crossing of the Lune.",
    "The last ferry of the day left Orlesby at 2:29 in the afternoon.",
    "The ferry's logbook was closed on 12/29/1871 by the harbour master.",
    "The harbour dues came to 1/29 of the cargo's value that year.",
    "The mill at Tavenby employed 29 500 hands across the whole county that year.",
    "On the coldest night the river fell to \u221229 degrees at the Orlesby ford.",
    "The new weir at Brede was 29\u202f500 millimetres long when it was finished.",
    "In the hard winter of 1871 the Brede mill pond froze at \u201329 degrees.",
]
COLD = [  # a negative gold: the sign is part of the number
    "On the coldest night the river fell to -29 degrees at the Orlesby ford.",
    "The ferry carried 29 passengers on its first crossing of the Lune.",
    "In the hard winter of 1871 the Brede mill pond froze at \u221229 degrees.",
]
ELLIPSIS = [  # sentence ends marked by an ellipsis character; one inside a quote that goes on in lower case
    "The mill at Tavenby burned down in the great fire\u2026 The ferry carried 12 carts across in that week.",
    "The keeper said \u201cit all burned\u2026\u201d The ferry carried 12 carts.",
    "The keeper wrote \u201cclosed\u2026 for the winter\u201d when 12 carts were stuck at the Orlesby ford.",
]
LINES_CARTS = [  # one fact a line, the line after the answer's opening with a three-digit number
    "Captain: Maren Colt of Orlesby\nPassengers on the first crossing: 29\n500 carts crossed in the first year"
]
PROBLEMS = {
    "add": {
        "task": "code",
        "answer": "def add(a, b):\n    return a + b\n",
        "tests": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
        "    assert candidate(10, 5) == 15\n\ncheck(add)\n",
    },
    "sum": {
        "task": "code",
        "answer": "print(sum(map(int, input().split())))\n",
        "tests": io_tests_json([("1 2\n", "3\n"), ("5 5 5\n", "15\n"), ("-4 4\n", "0\n")]),
    },
    # a test that expects a TypeError, and one that maps the candidate over a list
    "decode": {
        "task": "code",
        "answer": "def decode(data):\n    if not isinstance(data, str):\n        raise TypeError('text only')\n    return data\n",
        "tests": "def check(candidate):\n    try:\n        candidate(b'12')\n        raised = False\n"
        "    except TypeError:\n        raised = True\n    assert raised\n\ncheck(decode)\n",
    },
    "square": {
        "task": "code",
        "answer": "def square(x):\n    return x * x\n",
        "tests": "def check(candidate):\n    assert all(map(lambda x: candidate(x) == x * x, [1, 2, 3]))\n\ncheck(square)\n",
    },
    "big": {"task": "arithmetic", "answer": "1" + "0" * 198 + "37"},
    "42": {"task": "arithmetic", "answer": "42"},
    "nan": {"task": "arithmetic", "answer": "nan"},
    "inf": {"task": "arithmetic", "answer": "inf"},
    "ferry": {"task": "retrieval", "answer": "29", "sources": FERRY},
    "survey-year": {"task": "retrieval", "answer": "1902", "sources": SURVEY},
    "survey-depth": {"task": "retrieval", "answer": "3.5", "sources": SURVEY},
    "survey-keeper": {"task": "retrieval", "answer": "Tobin Hale", "sources": SURVEY},
    "survey-builder": {"task": "retrieval", "answer": "Orla Fenn", "sources": SURVEY},
    "ledger": {"task": "retrieval", "answer": "417", "sources": LEDGER},
    "toll": {"task": "retrieval", "answer": "29", "sources": TOLL},
    "hands": {"task": "retrieval", "answer": "29,500", "sources": TOLL},
    "depth": {"task": "retrieval", "answer": "3.5", "sources": DEPTH},
    "mail-range": {"task": "retrieval", "answer": "3-5", "sources": DEPTH},
    "depot-nails": {"task": "retrieval", "answer": "417", "sources": DEPOT},
    "depot-oil": {"task": "retrieval", "answer": "1,250", "sources": DEPOT},
    "mill-bros": {"task": "retrieval", "answer": "1880", "sources": MILL_ROUTE},
    "route-b": {"task": "retrieval", "answer": "29", "sources": MILL_ROUTE},
    "lines": {"task": "retrieval", "answer": "29", "sources": LINES},
    "nbsp": {"task": "retrieval", "answer": "29", "sources": NBSP},
    "tokens": {"task": "retrieval", "answer": "29", "sources": TOKENS},
    "tokens-time": {"task": "retrieval", "answer": "2:29", "sources": TOKENS},
    "tokens-hands": {"task": "retrieval", "answer": "29 500", "sources": TOKENS},
    "cold": {"task": "retrieval", "answer": "-29", "sources": COLD},
    "ellipsis": {"task": "retrieval", "answer": "12", "sources": ELLIPSIS},
    "lines-carts": {"task": "retrieval", "answer": "29", "sources": LINES_CARTS},
    # math-tier problems whose question matters to the reading: each carries its own prompt
    "3*4": {"task": "arithmetic", "answer": "12", "prompt": "What is 3 * 4?"},
    "7+12": {"task": "arithmetic", "answer": "19", "prompt": "What is 7 + 12?"},
    "5-9": {"task": "arithmetic", "answer": "-4", "prompt": "What is 5 - 9?"},
    "24/2": {"task": "arithmetic", "answer": "12", "prompt": "What is 24 / 2?"},
    "binom": {"task": "math", "answer": "120", "prompt": "In how many ways can 3 of 10 books be chosen?"},
    "2sqrt3": {"task": "math", "answer": "2\\sqrt{3}"},
    "x2+1": {"task": "math", "answer": "x^2+1"},
    "3": {"task": "math", "answer": "3"},
    "sqrt2/6": {"task": "math", "answer": "\\frac{\\sqrt{2}}{6}"},
    "37/3": {"task": "math", "answer": "\\frac{37}{3}"},
    "12": {"task": "math", "answer": "12"},
    "19": {"task": "math", "answer": "19"},
    "13": {"task": "math", "answer": "13"},
    "5cm": {"task": "math", "answer": "5\\text{ cm}"},
    "skelt": {"task": "exact", "answer": "\\text{Mount Skelt}"},
    # the exact decimal texts (verify.sql decides decimal answers by text): their edges
    "third": {"task": "arithmetic", "answer": "1/3"},
    "bigint": {"task": "arithmetic", "answer": "9223372036854775807"},
    "50%": {"task": "arithmetic", "answer": "50%"},
    "7/8": {"task": "arithmetic", "answer": "7/8"},
    # digits split by spacing: one number only in groups of three ('1 000'), else several
    "1213": {"task": "arithmetic", "answer": "1213"},
    "1000": {"task": "arithmetic", "answer": "1000"},
    "1000000": {"task": "arithmetic", "answer": "1000000"},
    "12000": {"task": "arithmetic", "answer": "12000"},
    # symbolic golds with a coefficient, which a unit reading took for a number ('2x' as 2)
    "2x": {"task": "math", "answer": "2x"},
    "4n": {"task": "math", "answer": "4n"},
    "6pi": {"task": "math", "answer": "6 pi"},
    "N2+1": {"task": "math", "answer": "N^2+1"},
    "pi/2": {"task": "math", "answer": "\\frac{\\pi}{2}"},
    "interval": {"task": "math", "answer": "(0, 1)"},
    "paris": {"task": "exact", "answer": "Paris"},
    # sets against tuples and intervals, letters in another case, radicals and scientific notation
    "set12": {"task": "math", "answer": "\\{1, 2\\}"},
    "tuple12": {"task": "math", "answer": "(1, 2)"},
    "2sqrt2/3": {"task": "math", "answer": "\\frac{2\\sqrt{2}}{3}"},
    "0.25": {"task": "arithmetic", "answer": "0.25"},
    "1e3": {"task": "arithmetic", "answer": "1e3"},
    "[0,1]": {"task": "math", "answer": "[0, 1]"},
    "[2,inf)": {"task": "math", "answer": "[2, \\infty)"},
    # exact-tier golds, named by task and gold as the math golds are (MATH_GOLDS below)
    "exact: A": {"task": "exact", "answer": "A"},
    "exact: -12": {"task": "exact", "answer": "-12"},
    "exact: 12": {"task": "exact", "answer": "12"},
    "exact: neither": {"task": "exact", "answer": "neither"},
    # logic golds of each kind: a propositional query, a syllogism, true/false/unknown
    "logic: false": {
        "task": "logic",
        "answer": "false",
        "meta": json.dumps({"kind": "propositional", "premises": ["P → Q", "¬Q"], "query": "P"}),
    },
    "logic: no": {
        "task": "logic",
        "answer": "no",
        "meta": json.dumps(
            {
                "kind": "syllogism",
                "premises": ["All cats are animals", "Some animals are dogs"],
                "conclusion": "Some cats are dogs",
            }
        ),
    },
    "logic: unknown": {
        "task": "logic",
        "answer": "unknown",
        "meta": json.dumps({"kind": "tfu", "premises": ["P → Q"], "statement": "Q"}),
    },
    # logic: the shipped kind (a variable to eliminate) and the open "what follows?" of a user's rows
    "eliminate-P": {
        "task": "logic",
        "answer": "(Q ∧ ¬R) ∨ (R ∧ S)",
        "meta": json.dumps({"kind": "propositional", "premises": ["P → Q", "¬P → R", "R → S"], "eliminate": "P"}),
    },
    # a gold whose full DNF in LaTeX is 491 characters
    "eliminate-P-5": {
        "task": "logic",
        "answer": "(¬Q ∧ R ∧ S ∧ ¬T ∧ ¬U) ∨ (¬Q ∧ R ∧ S ∧ ¬T ∧ U) ∨ (¬Q ∧ R ∧ S ∧ T ∧ U) ∨ (Q ∧ ¬R ∧ ¬S ∧ T ∧ U) ∨ "
        "(Q ∧ ¬R ∧ S ∧ ¬T ∧ ¬U) ∨ (Q ∧ ¬R ∧ S ∧ ¬T ∧ U) ∨ (Q ∧ ¬R ∧ S ∧ T ∧ U) ∨ (Q ∧ R ∧ S ∧ ¬T ∧ ¬U) ∨ "
        "(Q ∧ R ∧ S ∧ ¬T ∧ U) ∨ (Q ∧ R ∧ S ∧ T ∧ U)",
        "meta": json.dumps(
            {"kind": "propositional", "premises": ["P → Q", "¬P → R", "R → S", "S ∨ T", "T → U"], "eliminate": "P"}
        ),
    },
    "verdict-true": {
        "task": "logic",
        "answer": "true",
        "meta": json.dumps({"kind": "propositional", "premises": ["P → Q", "P"], "query": "Q"}),
    },
    "what-follows": {
        "task": "logic",
        "answer": "R",
        "meta": json.dumps({"kind": "propositional", "premises": ["P → Q", "Q → R", "P ∨ R"]}),
    },
}
# code: prompts whose helpers the tests trust, each with its tests carried the way every
# dataset builds them (tests_with_prompt), and fraction-mode tests whose asserts read the solution indirectly
FIND_ZERO_TESTS = (
    "def check(candidate):\n    for xs in ([1, 2], [-6, 11, -6, 1], [2, 3, 1, 5], [-3, 1, 4, 2]):\n"
    "        x = candidate(list(xs))\n        assert abs(poly(xs, x)) < 1e-6\n\ncheck(find_zero)\n"
)
FIND_ZERO_HEAD = (
    'import math\n\n\ndef poly(xs, x):\n    """Evaluates the polynomial with coefficients xs at x."""\n'
    "    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\n"
)
FIND_ZERO_STUB = (
    'def find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients).\n'
    '    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    """\n'
)
FIND_ZERO = (
    "def find_zero(xs):\n    lo, hi = -1.0, 1.0\n    while poly(xs, lo) * poly(xs, hi) > 0:\n        lo *= 2.0\n        hi *= 2.0\n"
    "    for _ in range(200):\n        mid = (lo + hi) / 2\n        if poly(xs, mid) * poly(xs, lo) > 0:\n            lo = mid\n"
    "        else:\n            hi = mid\n    return lo\n"
)


def _prompted(prompts: dict[str, str], answer: str, tests: str) -> dict[str, dict]:
    """Code problems, one per prompt, whose tests carry the prompt's code as the code tier reads it now."""
    return {
        name: {
            "task": "code",
            "prompt": prompt,
            "answer": answer,
            "tests": code_prompt.tests_with_prompt(prompt_code(prompt), tests),
        }
        for name, prompt in prompts.items()
    }


def _code_problems(table: dict[str, tuple[str | None, str, str]]) -> dict[str, dict]:
    """Code problems from (prompt, answer, tests) per name: built by _prompted, or plain when the prompt is None."""
    return {
        name: _prompted({name: prompt}, answer, tests)[name]
        if prompt is not None
        else {"task": "code", "answer": answer, "tests": tests}
        for name, (prompt, answer, tests) in table.items()
    }


HELPER_PROMPTS = {
    "rt9a-findzero-pass": FIND_ZERO_HEAD + FIND_ZERO_STUB + "    pass\n",
    "rt9a-findzero-nie": FIND_ZERO_HEAD + FIND_ZERO_STUB + "    raise NotImplementedError\n",
    "rt9a-findzero-niemsg": FIND_ZERO_HEAD + FIND_ZERO_STUB + "    raise NotImplementedError('write this')\n",
    "rt9a-findzero-retnone": FIND_ZERO_HEAD + FIND_ZERO_STUB + "    # your code here\n    return None\n",
    "rt9a-findzero-return": FIND_ZERO_HEAD + FIND_ZERO_STUB + "    # TODO\n    return\n",
    "rt9a-findzero-twoblocks": "You may use this helper:\n\n```python\n" + FIND_ZERO_HEAD.rstrip() + "\n```\n\n"
    "Complete this function:\n\n```python\n" + FIND_ZERO_STUB + "```\n",
    "rt9a-findzero-prose": "Given the helper\n\n    import math\n    def poly(xs, x):\n"
    "        return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n"
    "write find_zero(xs), which returns a zero of the polynomial xs.\n",
}
PROBLEMS |= _prompted(HELPER_PROMPTS, FIND_ZERO, FIND_ZERO_TESTS)
DECODE_PROMPT = (
    'def encode(s: str) -> str:\n    """Shift every letter by 3."""\n'
    "    return ''.join(chr((ord(c) - 97 + 3) % 26 + 97) for c in s)\n\n\n"
    'def decode(s: str) -> str:\n    """The inverse of encode."""\n    raise NotImplementedError()\n'
)
PROBLEMS["rt9a-decode-nie"] = {
    "task": "code",
    "prompt": DECODE_PROMPT,
    "answer": "def decode(s):\n    return ''.join(chr((ord(c) - 97 - 3) % 26 + 97) for c in s)\n",
    "tests": code_prompt.tests_with_prompt(
        prompt_code(DECODE_PROMPT),
        "import random\nimport string\n\n\ndef check(candidate):\n    for _ in range(50):\n"
        "        s = ''.join(random.choice(string.ascii_lowercase) for _ in range(12))\n"
        "        assert candidate(encode(s)) == s\n\n\ncheck(decode)\n",
    ),
}
FRACTION_TESTS = {
    "rt9a-qr": "def check(candidate):\n    assert candidate(7, 2) == (3, 1)\n    q, r = candidate(17, 5)\n    assert q == 3\n"
    "    assert r == 2\n    q, r = candidate(-7, 2)\n    assert q == -4\n    assert r == 1\n\ncheck(qr)\n",
    "rt9a-stats": "def check(candidate):\n    assert candidate([5]) == (5, 5, 5.0)\n    lo, hi, mean = candidate([1, 2, 3, 6])\n"
    "    assert lo == 1\n    assert hi == 6\n    assert abs(mean - 3.0) < 1e-9\n    [lo2, hi2, _] = candidate([-2, 4])\n"
    "    assert (lo2, hi2) == (-2, 4)\n\ncheck(stats)\n",
    "rt9a-headtail": "def check(candidate):\n    assert candidate([1]) == (1, [])\n    head, *rest = candidate([4, 5, 6])\n"
    "    assert head == 4\n    assert rest == [[5, 6]]\n\ncheck(split_first)\n",
    "rt9a-safediv": "def check(candidate):\n    assert candidate(6, 3) == 2\n    try:\n        candidate(1, 0)\n        ok = False\n"
    "    except ValueError:\n        ok = True\n    assert ok\n\ncheck(safe_div)\n",
    "rt9a-sqrtmsg": "def check(candidate):\n    assert candidate(16) == 4\n    msg = None\n    try:\n        candidate(-1)\n"
    "    except ValueError as e:\n        msg = str(e)\n    assert msg == 'negative'\n\ncheck(isqrt)\n",
    "rt9a-sortinplace": "def check(candidate):\n    assert candidate([]) is None\n    xs = [3, 1, 2]\n    candidate(xs)\n"
    "    assert xs == [1, 2, 3]\n    ys = [5, -1, 5, 0]\n    candidate(ys)\n    assert ys == [-1, 0, 5, 5]\n\ncheck(sort_in_place)\n",
    "rt9a-refcheck": "def reference(n):\n    return n if n < 2 else reference(n - 1) + reference(n - 2)\n\n\n"
    "def check(candidate, ref):\n    assert candidate(0) == 0\n    for n in range(1, 15):\n        assert candidate(n) == ref(n)\n"
    "    assert candidate(20) == ref(20)\n\n\ncheck(fib, reference)\n",
}
FRACTION_ANSWERS = {
    "rt9a-qr": "def qr(a, b):\n    return divmod(a, b)\n",
    "rt9a-stats": "def stats(xs):\n    return min(xs), max(xs), sum(xs) / len(xs)\n",
    "rt9a-headtail": "def split_first(xs):\n    return xs[0], xs[1:]\n",
    "rt9a-safediv": "def safe_div(a, b):\n    if b == 0:\n        raise ValueError('division by zero')\n    return a // b\n",
    "rt9a-sqrtmsg": "def isqrt(n):\n    if n < 0:\n        raise ValueError('negative')\n    import math\n    return math.isqrt(n)\n",
    "rt9a-sortinplace": "def sort_in_place(xs):\n    xs.sort()\n",
    "rt9a-refcheck": "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
}
PROBLEMS |= {name: {"task": "code", "answer": FRACTION_ANSWERS[name], "tests": tests} for name, tests in FRACTION_TESTS.items()}
PROBLEMS["rt9a-unittest"] = {  # unittest-style tests that end in unittest.main()
    "task": "code",
    "answer": "def add2(a, b):\n    return a + b\n",
    "tests": "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add2(2, 3), 5)\n"
    "        self.assertEqual(add2(-1, 1), 0)\n\n\nunittest.main()\n",
}
# code: find_zero prompts in other shapes (unfenced with an instruction line, other
# NotImplementedError stubs, a lambda poly, a plain fence, a block of >>> examples, prose beside a fence)
RT10A_FIND_ZERO_PROMPTS = {
    "rt10a-fz-instr-before": 'Complete the following Python function.\n\nimport math\n\n\ndef poly(xs, x):\n    """Evaluates the polynomial with coefficients xs at x."""\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients).\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    """\n',
    "rt10a-fz-instr-after": 'import math\n\n\ndef poly(xs, x):\n    """Evaluates the polynomial with coefficients xs at x."""\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients).\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    """\n\nComplete find_zero so that it returns a zero of the polynomial.\n',
    "rt10a-fz-nie-fstring": 'import math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n    raise NotImplementedError(f\'find_zero\')\n',
    "rt10a-fz-nie-from": 'import math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n    raise NotImplementedError from None\n',
    "rt10a-fz-nie-concat": 'import math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n    raise NotImplementedError(\'find_zero: \' + \'todo\')\n',
    "rt10a-fz-lambda": 'import math\n\npoly = lambda xs, x: sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n    pass\n',
    "rt10a-fz-plainfence": 'You may use this helper:\n\n```\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n```\n\nComplete this function:\n\n```python\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n```\n',
    "rt10a-fz-doctestblock": 'Helper:\n\n```python\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n```\n\nComplete:\n\n```python\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n```\n\nExample:\n\n```python\n>>> round(find_zero([1, 2]), 2)\n-0.5\n```\n',
    "rt10a-fz-prose+fence": 'Given the helper\n\n    import math\n    def poly(xs, x):\n        return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\ncomplete:\n\n```python\ndef find_zero(xs):\n    """A zero of the polynomial xs (even number of coefficients)."""\n```\n',
}
PROBLEMS |= _prompted(RT10A_FIND_ZERO_PROMPTS, FIND_ZERO, FIND_ZERO_TESTS)
# prompts whose helpers are tables, comprehensions, guarded imports, decorated classes: (prompt, answer, tests)
RT10A_PROMPTED = {
    "rt10a-primes": (
        'PRIMES = [p for p in range(2, 60) if all(p % d for d in range(2, p))]\n\n\ndef nth_prime(n: int) -> int:\n    """The n-th prime, counting from 0 (PRIMES lists the first ones)."""\n',
        "def nth_prime(n):\n    count, p = -1, 1\n    while count < n:\n        p += 1\n        if all(p % d for d in range(2, p)):\n            count += 1\n    return p\n",
        "def check(candidate):\n    for n in (0, 3, 7, 12):\n        assert candidate(n) == PRIMES[n]\n\n\ncheck(nth_prime)\n",
    ),
    "rt10a-shift": (
        'import string\n\nSHIFT = {c: string.ascii_lowercase[(i + 3) % 26] for i, c in enumerate(string.ascii_lowercase)}\n\n\ndef encode(s: str) -> str:\n    """Shift every letter by 3 with SHIFT."""\n',
        "def encode(s):\n    return ''.join(chr((ord(c) - 97 + 3) % 26 + 97) for c in s)\n",
        "def check(candidate):\n    for s in ('abc', 'xyz', 'hello'):\n        assert candidate(s) == ''.join(SHIFT[c] for c in s)\n\n\ncheck(encode)\n",
    ),
    "rt10a-tryhelper": (
        'try:\n    from math import isqrt\nexcept ImportError:\n    def isqrt(n):\n        return int(n ** 0.5)\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square."""\n',
        "def is_square(n):\n    return int(n ** 0.5) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398, 10 ** 6):\n        assert candidate(n) == (isqrt(n) ** 2 == n)\n\n\ncheck(is_square)\n",
    ),
    "rt10a-loop": (
        'SQUARES = {}\nfor i in range(20):\n    SQUARES[i] = i * i\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square below 400 (see SQUARES)."""\n',
        "def is_square(n):\n    return n in SQUARES.values()\n",
        "def check(candidate):\n    assert candidate(49)\n    assert not candidate(50)\n    assert candidate(361)\n\n\ncheck(is_square)\n",
    ),
    "rt10a-loop2": (
        'SQUARES = set()\nfor i in range(20):\n    SQUARES.add(i * i)\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square below 400."""\n',
        "def is_square(n):\n    return int(n ** 0.5) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398):\n        assert candidate(n) == (n in SQUARES)\n\n\ncheck(is_square)\n",
    ),
    "rt10a-augassign": (
        'ALPHABET = \'abcdefghijklm\'\nALPHABET += \'nopqrstuvwxyz\'\n\n\ndef rotate(s: str) -> str:\n    """Rot13 over ALPHABET."""\n',
        "def rotate(s):\n    return ''.join(chr((ord(c) - 97 + 13) % 26 + 97) for c in s)\n",
        "def check(candidate):\n    for s in ('hello', 'abc', 'xyz'):\n        assert candidate(s) == ''.join(ALPHABET[(ALPHABET.index(c) + 13) % len(ALPHABET)] for c in s)\n\n\ncheck(rotate)\n",
    ),
    "rt10a-dataclass": (
        'from dataclasses import dataclass\n\n\n@dataclass\nclass Item:\n    name: str\n    price: float\n\n\ndef total(prices: list) -> float:\n    """Sum of the prices."""\n',
        "def total(prices):\n    return sum(prices)\n",
        "def check(candidate):\n    items = [Item('a', 1.5), Item('b', 2.5)]\n    assert candidate([i.price for i in items]) == 4.0\n\n\ncheck(total)\n",
    ),
}
PROBLEMS |= _code_problems(RT10A_PROMPTED)
# code: prompts whose helpers the prompt-finding missed (a prose line between helper and stub,
# ```py3 and ~~~ fences, a helper block ending in >>> examples, helpers bound under if/else, tables filled by a
# for-if, a while loop, a comprehension or a call of the prompt's own function, an annotated table in a plain fence)
RT12_FIND_ZERO_PROMPTS = {
    "rt12-fz-split": 'You may use this helper:\n\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\nComplete the following Python function.\n\ndef find_zero(xs):\n    """Find a zero of the polynomial with coefficients xs.\n    xs has an even number of coefficients\n    and its largest non-zero coefficient guarantees a solution.\n    Return only one zero point, even if there are many.\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    >>> round(find_zero([-6, 11, -6, 1]), 2)\n    1.0\n    """\n',
    "rt12-fz-prosehelper": 'Given the helper\n\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\ncomplete:\n\n```python\ndef find_zero(xs):\n    """Find a zero of the polynomial with coefficients xs.\n    xs has an even number of coefficients\n    and its largest non-zero coefficient guarantees a solution.\n    Return only one zero point, even if there are many.\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    >>> round(find_zero([-6, 11, -6, 1]), 2)\n    1.0\n    """\n```\n',
    "rt12-fz-py3fence": 'Helper:\n\n```py3\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n```\n\nComplete:\n\n```python\ndef find_zero(xs):\n    """Find a zero of the polynomial with coefficients xs.\n    xs has an even number of coefficients\n    and its largest non-zero coefficient guarantees a solution.\n    Return only one zero point, even if there are many.\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    >>> round(find_zero([-6, 11, -6, 1]), 2)\n    1.0\n    """\n```\n',
    "rt12-fz-helperdoctest": 'Helper:\n\n```python\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\n>>> poly([1, 2], 3)\n7.0\n```\n\nComplete:\n\n```python\ndef find_zero(xs):\n    """A zero of the polynomial xs."""\n```\n',
    "rt12-fz-tildefence": 'Helper:\n\n~~~python\nimport math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n~~~\n\nComplete:\n\n~~~python\ndef find_zero(xs):\n    """Find a zero of the polynomial with coefficients xs.\n    xs has an even number of coefficients\n    and its largest non-zero coefficient guarantees a solution.\n    Return only one zero point, even if there are many.\n    >>> round(find_zero([1, 2]), 2)\n    -0.5\n    >>> round(find_zero([-6, 11, -6, 1]), 2)\n    1.0\n    """\n~~~\n',
}
RT12_PROMPTED = {
    "rt12-isqrt-version": (
        'import sys\n\nif sys.version_info >= (3, 8):\n    from math import isqrt\nelse:\n    def isqrt(n):\n        return int(n ** 0.5)\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square."""\n',
        "def is_square(n):\n    return isqrt(n) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398, 10 ** 6):\n        assert candidate(n) == (isqrt(n) ** 2 == n)\n\n\ncheck(is_square)\n",
    ),
    "rt12-isqrt-hasattr": (
        'import math\n\nif hasattr(math, "isqrt"):\n    isqrt = math.isqrt\nelse:\n    isqrt = lambda n: int(n ** 0.5)\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square."""\n',
        "def is_square(n):\n    return isqrt(n) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398, 10 ** 6):\n        assert candidate(n) == (isqrt(n) ** 2 == n)\n\n\ncheck(is_square)\n",
    ),
    "rt12-odd-forif": (
        'ODD = set()\nfor i in range(40):\n    if i % 2:\n        ODD.add(i)\n\n\ndef is_odd(n: int) -> bool:\n    """True when n is odd (ODD lists those below 40)."""\n',
        "def is_odd(n):\n    return n % 2 == 1\n",
        "def check(candidate):\n    for n in (1, 2, 7, 10, 39):\n        assert candidate(n) == (n in ODD)\n\n\ncheck(is_odd)\n",
    ),
    "rt12-squares-fill": (
        'SQUARES = set()\n\n\ndef _fill():\n    for i in range(20):\n        SQUARES.add(i * i)\n\n\n_fill()\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square below 400."""\n',
        "def is_square(n):\n    return int(n ** 0.5) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398):\n        assert candidate(n) == (n in SQUARES)\n\n\ncheck(is_square)\n",
    ),
    "rt12-squares-while": (
        'SQUARES = set()\ni = 0\nwhile i < 20:\n    SQUARES.add(i * i)\n    i += 1\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square below 400."""\n',
        "def is_square(n):\n    return int(n ** 0.5) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398):\n        assert candidate(n) == (n in SQUARES)\n\n\ncheck(is_square)\n",
    ),
    "rt12-squares-comp": (
        'SQUARES = set()\n[SQUARES.add(i * i) for i in range(20)]\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square below 400."""\n',
        "def is_square(n):\n    return int(n ** 0.5) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398):\n        assert candidate(n) == (n in SQUARES)\n\n\ncheck(is_square)\n",
    ),
    "rt12-primes-fence": (
        'Use this table:\n\n```\nPRIMES: list = [2, 3, 5, 7, 11, 13]\n```\n\nComplete:\n\n```python\ndef nth_prime(n: int) -> int:\n    """The n-th prime, counting from 0 (PRIMES lists the first ones)."""\n```\n',
        "def nth_prime(n):\n    return [2, 3, 5, 7, 11, 13][n]\n",
        "def check(candidate):\n    for n in range(6):\n        assert candidate(n) == PRIMES[n]\n\n\ncheck(nth_prime)\n",
    ),
    "rt12-double-all": (
        'def double(n: int) -> int:\n    """Twice n."""\n\n\ndef double_all(ns):\n    return [double(n) for n in ns]\n',
        "def double(n):\n    return 2 * n\n",
        "assert double_all([1, 3]) == [2, 6]\nassert double_all([]) == []\n",
    ),
}
PROBLEMS |= _prompted(RT12_FIND_ZERO_PROMPTS, FIND_ZERO, FIND_ZERO_TESTS)
PROBLEMS |= _code_problems(RT12_PROMPTED)
# tests without a prompt: the try/assert False/except idiom, and fraction-mode asserts reading the solution indirectly
RT10A_PLAIN = {
    "rt10a-raise": (
        "def safe_sqrt(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
        "def check(candidate):\n    assert candidate(4) == 2\n    try:\n        candidate(-1)\n        assert False, 'expected ValueError'\n    except ValueError:\n        pass\n\n\ncheck(safe_sqrt)\n",
    ),
    "rt10a-raise-else": (
        "def safe_sqrt(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
        "def check(candidate):\n    assert candidate(4) == 2\n    try:\n        candidate(-1)\n    except ValueError:\n        pass\n    else:\n        assert False, 'expected ValueError'\n\n\ncheck(safe_sqrt)\n",
    ),
    "rt10a-matchflag": (
        "def safe_div(a, b):\n    if b == 0:\n        raise ValueError('division by zero')\n    return a // b\n",
        "def check(candidate):\n    assert candidate(6, 3) == 2\n    ok = False\n    match candidate(9, 3):\n        case 3:\n            ok = True\n    assert ok\n    good = False\n    match candidate(8, 2):\n        case 4:\n            good = True\n    assert good\n\n\ncheck(safe_div)\n",
    ),
    "rt10a-printfile": (
        "def square(x):\n    return x * x\n",
        "import io\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n    buf = io.StringIO()\n    for x in (3, 5):\n        print(candidate(x), file=buf)\n    assert buf.getvalue() == '9\\n25\\n'\n\n\ncheck(square)\n",
    ),
    "rt10a-heap": (
        "def square(x):\n    return x * x\n",
        "import heapq\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n    h = []\n    for x in (5, 3, 4):\n        heapq.heappush(h, candidate(x))\n    assert h[0] == 9\n    assert sorted(h) == [9, 16, 25]\n\n\ncheck(square)\n",
    ),
    "rt10a-mapverify": (
        "def square(x):\n    return x * x\n",
        "def verify(res, x):\n    assert res == x * x\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n    list(map(verify, [candidate(3), candidate(5)], [3, 5]))\n\n\ncheck(square)\n",
    ),
    "rt10a-bisect": (
        "def double(x):\n    return 2 * x\n",
        "import bisect\n\n\ndef check(candidate):\n    assert candidate(1) == 2\n    out = []\n    for x in (3, 2):\n        bisect.insort(out, candidate(x))\n    assert out == [4, 6]\n\n\ncheck(double)\n",
    ),
    "rt10a-listappend": (
        "def square(x):\n    return x * x\n",
        "def check(candidate):\n    assert candidate(2) == 4\n    got = []\n    for x in (3, 5):\n        list.append(got, candidate(x))\n    assert got == [9, 25]\n\n\ncheck(square)\n",
    ),
    "rt10a-setitem": (
        "def square(x):\n    return x * x\n",
        "import operator\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n    table = {}\n    for x in (3, 5):\n        operator.setitem(table, x, candidate(x))\n    assert table == {3: 9, 5: 25}\n\n\ncheck(square)\n",
    ),
    "rt10a-alias": (
        "def square(x):\n    return x * x\n",
        "def verify(res, x):\n    assert res == x * x\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n    run = verify\n    for x in (3, 5):\n        run(candidate(x), x)\n\n\ncheck(square)\n",
    ),
    "rt10a-match": (
        "def qr(a, b):\n    return divmod(a, b)\n",
        "def check(candidate):\n    assert candidate(7, 2) == (3, 1)\n    match candidate(17, 5):\n        case (q, r):\n            assert q == 3\n            assert r == 2\n    match candidate(-7, 2):\n        case (q2, r2):\n            assert q2 == -4\n            assert r2 == 1\n\n\ncheck(qr)\n",
    ),
}
PROBLEMS |= {name: {"task": "code", "answer": answer, "tests": tests} for name, (answer, tests) in RT10A_PLAIN.items()}
# code: prompts whose module-level code the helpers missed (a try whose handler raises, a del, a
# module call seeding random or raising the recursion limit, a loop of bisect.insort, a guard that warns, a table of the
# stubs, a stub as a default, a table built through a helper that names the stub), exceptions and prose examples
RT13_PROMPTED = {
    "rt13-invalidage": (
        'class InvalidAge(ValueError):\n    """Raised for an impossible age."""\n\n\ndef check_age(n: int) -> int:\n    """Return n, or raise InvalidAge when n is negative or over 150."""\n',
        "def check_age(n):\n    if n < 0 or n > 150:\n        raise InvalidAge(n)\n    return n\n",
        "def check(candidate):\n    assert candidate(30) == 30\n    try:\n        candidate(-1)\n        ok = False\n    except InvalidAge:\n        ok = True\n    assert ok\n\ncheck(check_age)\n",
    ),
    "rt13-ops-table": (
        'def square(x: int) -> int:\n    """x squared."""\n\n\ndef cube(x: int) -> int:\n    """x cubed."""\n\n\nOPS = {"square": square, "cube": cube}\n',
        "def square(x):\n    return x * x\n\ndef cube(x):\n    return x ** 3\n",
        "assert OPS['square'](3) == 9\nassert OPS['cube'](2) == 8\n",
    ),
    "rt13-default-stub": (
        'def normalize(s: str) -> str:\n    """s stripped and lower-cased."""\n\n\ndef normalize_all(items, fn=normalize):\n    return [fn(x) for x in items]\n',
        "def normalize(s):\n    return s.strip().lower()\n",
        "assert normalize_all([' A', 'b ']) == ['a', 'b']\nassert normalize_all(['Q']) == ['q']\n",
    ),
    "rt13-prose-example": (
        "Write a function that returns the larger of two integers.\n\nExamples:\n\nbigger(2, 3) -> 3\nbigger(7, 1) -> 7\n\n```python\ndef bigger(a: int, b: int) -> int:\n    pass\n```\n",
        "def bigger(a, b):\n    return max(a, b)\n",
        "def check(candidate):\n    assert candidate(2, 3) == 3\n    assert candidate(7, 1) == 7\n    assert candidate(-5, -9) == -5\n    assert candidate(4, 10) == 10\n\ncheck(bigger)\n",
    ),
    "rt13-try-raise-comb": (
        'try:\n    from math import comb\nexcept ImportError:\n    raise SystemExit("Python 3.8 or later is needed")\n\n\ndef pascal_row(n: int) -> list:\n    """Row n of Pascal\'s triangle, using comb."""\n',
        "def pascal_row(n):\n    return [comb(n, k) for k in range(n + 1)]\n",
        "def check(candidate):\n    for n in range(6):\n        assert candidate(n) == [comb(n, k) for k in range(n + 1)]\n\ncheck(pascal_row)\n",
    ),
    "rt13-del-table": (
        'WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]\nWORKDAYS = WEEKDAYS[:]\ndel WORKDAYS[5:]\n\n\ndef is_workday(day: str) -> bool:\n    """True when day is one of WORKDAYS."""\n',
        "def is_workday(day):\n    return day in ('Mon', 'Tue', 'Wed', 'Thu', 'Fri')\n",
        "def check(candidate):\n    for d in WEEKDAYS:\n        assert candidate(d) == (d in WORKDAYS)\n\ncheck(is_workday)\n",
    ),
    "rt13-seed": (
        'import random\n\nrandom.seed(7)\nWEIGHTS = [random.randint(1, 9) for _ in range(5)]\n\n\ndef weighted_sum(xs: list) -> int:\n    """The sum of x * w over xs and WEIGHTS."""\n',
        "def weighted_sum(xs):\n    return sum(x * w for x, w in zip(xs, WEIGHTS))\n",
        "def check(candidate):\n    assert candidate([1, 1, 1, 1, 1]) == sum(WEIGHTS)\n    assert candidate([1, 0, 0, 0, 2]) == WEIGHTS[0] + 2 * WEIGHTS[4]\n\ncheck(weighted_sum)\n",
    ),
    "rt13-recursionlimit": (
        'import sys\n\nsys.setrecursionlimit(20000)\n\n\ndef count_nodes(n: int) -> int:\n    """The number of nodes of a path of n nodes, counted recursively (n up to 5000)."""\n',
        "def count_nodes(n):\n    return 0 if n == 0 else 1 + count_nodes(n - 1)\n",
        "def check(candidate):\n    assert candidate(3) == 3\n    assert candidate(5000) == 5000\n\ncheck(count_nodes)\n",
    ),
    "rt13-insort-loop": (
        'import bisect\n\nSORTED = []\nfor w in ("pear", "apple", "fig"):\n    bisect.insort(SORTED, w)\n\n\ndef rank(word: str) -> int:\n    """The index of word in SORTED, or -1 when it is not there."""\n',
        "def rank(word):\n    return ['apple', 'fig', 'pear'].index(word) if word in ('apple', 'fig', 'pear') else -1\n",
        "def check(candidate):\n    for w in ('apple', 'fig', 'pear', 'kiwi'):\n        assert candidate(w) == (SORTED.index(w) if w in SORTED else -1)\n\ncheck(rank)\n",
    ),
    "rt13-samples": (
        'def encode(s: str, key: int = 3) -> str:\n    if key < 0:\n        return decode(s, -key)\n    return "".join(chr((ord(c) - 97 + key) % 26 + 97) for c in s)\n\n\nSAMPLES = [encode(w) for w in ("abc", "xyz", "hello")]\n\n\ndef decode(s: str, key: int = 3) -> str:\n    """Invert encode."""\n',
        "def decode(s, key=3):\n    return ''.join(chr((ord(c) - 97 - key) % 26 + 97) for c in s)\n",
        "def check(candidate):\n    for w, e in zip(('abc', 'xyz', 'hello'), SAMPLES):\n        assert candidate(e) == w\n    assert candidate(encode('quiz')) == 'quiz'\n\ncheck(decode)\n",
    ),
    "rt13-guard-warn": (
        'import math\nimport warnings\n\nif hasattr(math, "isqrt"):\n    isqrt = math.isqrt\nelse:\n    warnings.warn("no math.isqrt: using a float root")\n    def isqrt(n):\n        return int(n ** 0.5)\n\n\ndef is_square(n: int) -> bool:\n    """True when n is a perfect square."""\n',
        "def is_square(n):\n    return isqrt(n) ** 2 == n\n",
        "def check(candidate):\n    for n in (0, 49, 50, 361, 398, 10 ** 6):\n        assert candidate(n) == (isqrt(n) ** 2 == n)\n\ncheck(is_square)\n",
    ),
}
PROBLEMS |= _code_problems(RT13_PROMPTED)
RT13_PLAIN = {
    "rt13-statserror": (
        "import statistics\n\ndef average(xs):\n    return statistics.mean(xs)\n",
        "import statistics\n\ndef check(candidate):\n    assert candidate([1, 2, 3]) == 2\n    try:\n        candidate([])\n        ok = False\n    except statistics.StatisticsError:\n        ok = True\n    assert ok\n\ncheck(average)\n",
    ),
    "rt13-keyerror-args": (
        "def lookup(d, k):\n    return d[k]\n",
        "def check(candidate):\n    assert candidate({'a': 1}, 'a') == 1\n    try:\n        candidate({'a': 1}, 'b')\n        key = None\n    except KeyError as e:\n        key = e.args[0]\n    assert key == 'b'\n\ncheck(lookup)\n",
    ),
    "rt13-msg-newline": (
        "def root(x):\n    if x < 0:\n        raise ValueError(f'negative input:\\n  {x}')\n    return x ** 0.5\n",
        "def check(candidate):\n    assert candidate(4) == 2.0\n    try:\n        candidate(-4)\n        msg = ''\n    except ValueError as e:\n        msg = str(e)\n    assert msg == 'negative input:\\n  -4'\n\ncheck(root)\n",
    ),
    "rt13-msg-long": (
        "def limit(xs):\n    if len(xs) > 10:\n        raise ValueError('too many items: ' + repr(xs))\n    return xs\n",
        "def check(candidate):\n    xs = list(range(100))\n    try:\n        candidate(xs)\n        msg = ''\n    except ValueError as e:\n        msg = str(e)\n    assert msg == 'too many items: ' + repr(xs)\n\ncheck(limit)\n",
    ),
}
PROBLEMS |= {name: {"task": "code", "answer": answer, "tests": tests} for name, (answer, tests) in RT13_PLAIN.items()}
# code: exceptions rebuilt faithfully, the proxy's __name__, late prompt code, shown examples in more styles
RT15 = {  # name: (prompt or None, answer, tests)
    "rt15-exc2arg": (
        'Write withdraw(balance, amount) returning the new balance; raise the given InsufficientFunds when amount > balance.\n\n```python\nclass InsufficientFunds(Exception):\n    def __init__(self, balance, amount):\n        super().__init__(f"cannot withdraw {amount}: balance is {balance}")\n        self.balance = balance\n        self.amount = amount\n\n\ndef withdraw(balance, amount):\n    """Return balance - amount; raise InsufficientFunds(balance, amount) if amount > balance."""\n    pass\n```\n',
        "def withdraw(balance, amount):\n    if amount > balance:\n        raise InsufficientFunds(balance, amount)\n    return balance - amount\n",
        "def check(candidate):\n    assert candidate(100, 30) == 70\n    assert candidate(50, 50) == 0\n    try:\n        candidate(20, 50)\n        assert False\n    except InsufficientFunds as e:\n        assert e.amount == 50 and e.balance == 20\n\ncheck(withdraw)\n",
    ),
    "rt15-exc1argfmt": (
        '```python\nclass InvalidAge(ValueError):\n    def __init__(self, age):\n        super().__init__(f"invalid age: {age}")\n        self.age = age\n\n\ndef check_age(n):\n    """Return n when 0 <= n <= 150, else raise InvalidAge(n)."""\n```\n',
        "def check_age(n):\n    if n < 0 or n > 150:\n        raise InvalidAge(n)\n    return n\n",
        'def check(candidate):\n    assert candidate(30) == 30\n    try:\n        candidate(-1)\n        assert False\n    except InvalidAge as e:\n        assert e.age == -1\n        assert str(e) == "invalid age: -1"\n\ncheck(check_age)\n',
    ),
    "rt15-jsondecode": (
        None,
        "import json\n\ndef parse_config(s):\n    return json.loads(s)\n",
        "import json\n\ndef check(candidate):\n    assert candidate('{\"a\": 1}') == {\"a\": 1}\n    try:\n        candidate('{bad')\n        assert False\n    except json.JSONDecodeError as e:\n        assert e.pos == 1\n\ncheck(parse_config)\n",
    ),
    "rt15-fnf-filename": (
        None,
        "def first_line(path):\n    with open(path) as f:\n        return f.readline().rstrip('\\n')\n",
        'def check(candidate):\n    try:\n        candidate("/nonexistent/data.txt")\n        assert False\n    except FileNotFoundError as e:\n        assert e.filename == "/nonexistent/data.txt"\n\ncheck(first_line)\n',
    ),
    "rt15-fx-print-output": (
        '```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n."""\n\n\nprint(digit_sum(123))  # Output: 6\nprint(digit_sum(9045))  # Output: 18\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-hash-output": (
        '```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n."""\n\n\ndigit_sum(123)  # Output: 6\ndigit_sum(9045)  # Output: 18\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-should-be": (
        'Complete the function. For example, digit_sum(123) should be 6 and digit_sum(9045) should be 18.\n\n```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n."""\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-backticks": (
        'Complete the function.\n\n- `digit_sum(123)` returns `6`\n- `digit_sum(9045)` returns `18`\n\n```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n."""\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-leetcode": (
        'Complete the function.\n\nExample 1:\nInput: n = 123\nOutput: 6\n\nExample 2:\nInput: n = 9045\nOutput: 18\n\n```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n."""\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-unicode-arrow": (
        '```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n.\n\n    digit_sum(123) → 6\n    digit_sum(9045) → 18\n    """\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-gives": (
        '```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n.\n\n    Examples: digit_sum(123) gives 6, digit_sum(9045) gives 18.\n    """\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-fx-kw-shown": (
        '```python\ndef digit_sum(n):\n    """Return the sum of the decimal digits of the non-negative integer n.\n\n    >>> digit_sum(n=123)\n    6\n    >>> digit_sum(n=9045)\n    18\n    """\n```\n',
        "```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```",
        "def check(candidate):\n    assert candidate(123) == 6\n    assert candidate(9045) == 18\n    assert candidate(7) == 7\n    assert candidate(99999) == 45\n\ncheck(digit_sum)\n",
    ),
    "rt15-late-dunder-name": (
        '```python\ndef square(x):\n    """Return x squared."""\n\n\ndef cube(x):\n    """Return x cubed."""\n\n\nOPS = {f.__name__: f for f in (square, cube)}\n\n\ndef apply(name, x):\n    return OPS[name](x)\n```\n',
        "def square(x):\n    return x * x\n\ndef cube(x):\n    return x ** 3\n",
        'assert square(3) == 9\nassert cube(2) == 8\nassert apply("square", 4) == 16\nassert apply("cube", 3) == 27\n',
    ),
    "rt15-tests-dunder-name": (
        None,
        "def square(x):\n    return x * x\n",
        'def check(candidate):\n    for x, want in [(2, 4), (3, 9), (-1, 1)]:\n        got = candidate(x)\n        assert got == want, f"{candidate.__name__}({x}) returned {got}, expected {want}"\n    print(f"{candidate.__name__}: all passed")\n\ncheck(square)\n',
    ),
    "rt15-late-partial": (
        '```python\nfrom functools import partial\n\n\ndef power(x, exp):\n    """Return x ** exp."""\n\n\nsquare = partial(power, exp=2)\ncube = partial(power, exp=3)\n```\n',
        "def power(x, exp):\n    return x ** exp\n",
        "assert power(2, 5) == 32\nassert square(7) == 49\nassert cube(2) == 8\n",
    ),
    "rt15-exc-default-wrong": (
        '```python\nclass HTTPError(Exception):\n    def __init__(self, message, status=500):\n        super().__init__(message)\n        self.status = status\n\n\ndef fetch_status(path):\n    """Return 200 for "/" and "/home". Raise HTTPError("forbidden", 403) for a path under "/admin",\n    and HTTPError("server error") (status 500) for any other path."""\n```\n',
        "def fetch_status(path):\n    if path in ('/', '/home'):\n        return 200\n    if path.startswith('/admin'):\n        raise HTTPError('forbidden', 403)\n    raise HTTPError('server error')\n",
        'def check(candidate):\n    assert candidate("/") == 200\n    assert candidate("/home") == 200\n    try:\n        candidate("/x")\n        assert False\n    except HTTPError as e:\n        assert e.status == 500\n    try:\n        candidate("/admin/users")\n        assert False\n    except HTTPError as e:\n        assert e.status == 403\n\ncheck(fetch_status)\n',
    ),
    "rt15-exc-default-right": (
        '```python\nclass HTTPError(Exception):\n    def __init__(self, message, status=500):\n        super().__init__(message)\n        self.status = status\n\n\ndef fetch_status(path):\n    """Return 200 for "/" and "/home". Raise HTTPError("forbidden", 403) for a path under "/admin",\n    and HTTPError("server error") (status 500) for any other path."""\n```\n',
        "def fetch_status(path):\n    if path in ('/', '/home'):\n        return 200\n    if path.startswith('/admin'):\n        raise HTTPError('forbidden', 403)\n    raise HTTPError('server error')\n",
        'def check(candidate):\n    assert candidate("/") == 200\n    assert candidate("/home") == 200\n    try:\n        candidate("/x")\n        assert False\n    except HTTPError as e:\n        assert e.status == 500\n    try:\n        candidate("/admin/users")\n        assert False\n    except HTTPError as e:\n        assert e.status == 403\n\ncheck(fetch_status)\n',
    ),
    "rt15-exc-subclass-prompt": (
        '```python\nclass ValidationError(Exception):\n    pass\n\n\ndef validate_name(name):\n    """Return name stripped; raise ValidationError (or a subclass of it) when it is empty or longer than 20 characters."""\n```\n',
        "class EmptyNameError(ValidationError):\n    pass\n\nclass NameTooLongError(ValidationError):\n    pass\n\ndef validate_name(name):\n    name = name.strip()\n    if not name:\n        raise EmptyNameError('empty name')\n    if len(name) > 20:\n        raise NameTooLongError('name too long')\n    return name\n",
        'def check(candidate):\n    assert candidate("  Ann ") == "Ann"\n    for bad in ["", "   ", "x" * 21]:\n        try:\n            candidate(bad)\n            assert False\n        except ValidationError:\n            pass\n\ncheck(validate_name)\n',
    ),
    "rt15-exc-subclass-module": (
        None,
        "import statistics\n\nclass EmptyDataError(statistics.StatisticsError):\n    pass\n\ndef safe_mean(xs):\n    if not xs:\n        raise EmptyDataError('no data')\n    return statistics.mean(xs)\n",
        "import statistics\n\ndef check(candidate):\n    assert candidate([1, 2, 3]) == 2\n    try:\n        candidate([])\n        assert False\n    except statistics.StatisticsError:\n        pass\n\ncheck(safe_mean)\n",
    ),
}
PROBLEMS |= _code_problems(RT15)
# the math golds, each a problem named by its task and gold ('math: 2\\sqrt{3}')
MATH_GOLDS = [
    "60",
    "-5",
    "72",
    "\\$18.90",
    "3.75",
    "\\text{(C)}",
    "-\\frac{3}{2}",
    "90^\\circ",
    "\\sqrt{13}",
    "10\\%",
    "\\dfrac{1}{6}",
    "\\$42",
    "0.75",
    "\\frac{3}{4}",
    "-0.5",
    "0.25",
    "75",
    "18",
    "25",
    "1200",
    "12.5",
    "6",
    "\\frac{1}{4}",
    "\\begin{pmatrix} -1 \\\\ 2 \\end{pmatrix}",
    "\\begin{pmatrix} -1 & 2 \\end{pmatrix}",
    "\\begin{pmatrix} 1 & -1 \\\\ 2 & -2 \\end{pmatrix}",
    "[-2, 3)",
    "(-\\infty, -1]",
    "\\{1, -2\\}",
    "2\\sqrt{3}-1",
    "x^2-4",
    "(x-2)(x+2)",
    "-1-\\sqrt{2}",
    "\\frac{-1+\\sqrt{5}}{2}",
    "\\frac{1-\\sqrt{5}}{2}",
    "3-2\\sqrt{2}",
    "y=2x-3",
    "y=-2x+1",
    "4\\pi-8",
    "12-4\\sqrt{3}",
    "3-2i",
    "2^{2009}",
    "\\frac{\\sqrt{3}-1}{2}",
    "\\frac{1}{2}-\\frac{\\sqrt{3}}{2}i",
    "x \\in [-1, 2]",
    "[-1, 2]",
    "2-\\sqrt{2}",
    "(2, -3)",
    "\\frac{9\\sqrt{3}}{2}",
    "-\\frac{1}{2}",
    "-12",
    "12000",
    "3.5",
    "36",
    "\\begin{pmatrix} 1/2 \\\\ -1 \\end{pmatrix}",
    "\\begin{pmatrix} \\frac{2}{5} \\\\ -\\frac{1}{5} \\end{pmatrix}",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
    "\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}",
    "\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}",
    "\\begin{pmatrix} 1 & 1 \\\\ 0 & 1 \\end{pmatrix}",
    "\\begin{pmatrix} 0 & -1 \\\\ 1 & 0 \\end{pmatrix}",
    "\\begin{pmatrix} 3 \\\\ -1 \\\\ 0 \\end{pmatrix}",
    "\\begin{pmatrix} \\sqrt{2} \\\\ 1 \\end{pmatrix}",
    "2",
    "10",
    "\\frac{\\pi}{4}",
    "6\\pi",
    "2x+3",
    "\\frac{x}{2}",
    "n^2",
    "3\\sqrt{2}",
    "\\frac{1}{3}",
    "4\\sqrt{2}",
    "6\\sqrt{3}",
    "12\\pi",
    "(-\\infty, 3]",
    "(-\\infty, -2) \\cup (3, \\infty)",
    "2e",
    "\\frac{\\pi}{3}",
    "\\frac{\\pi}{2}+k\\pi",
    "x+1",
    "2k+1",
    "\\pi",
    "\\sqrt{2}",
    "x = 2",
    "5",
    "3, 5",
    "-3, 3",
    "5\\sqrt{2}",
    "602000000000000000000000",
    "0.0019",
    "x = -1",
    "y = 2x+1",
    "3\\frac{1}{2}",
    "-2\\frac{1}{4}",
    "\\frac{5}{2}",
    "-\\frac{5}{2}",
    "0.019",
    "60^\\circ",
    "k\\pi",
    "[2, 5]",
    "f(x) = x^2",
    "(\\frac{1}{2}, 3)",
    "\\frac{1}{4}x+1",
    "-\\frac{\\sqrt{3}}{4}",
    "-19",
    "0.19",
    "-\\frac{7}{2}",
    "(0.5, 3)",
    "[0, 1)",
    "\\frac{\\pi}{2}+2k\\pi, k \\in \\mathbb{Z}",
    "\\frac{3\\pi}{4}",
    "36\\pi",
    "\\frac{9\\pi}{2}",
    "\\{1, 2, 3\\}",
    "1, 2",
    "-2, 2",
    "1\\pm\\sqrt{2}",
    "1+\\sqrt{2}, 1-\\sqrt{2}",
    "-1, \\frac{1}{2}",
    "2, 3, 4",
    "\\left(\\frac{1}{2}, 3\\right)",
    "\\frac{\\pi}{4}+k\\pi",
    "30^\\circ",
    "12\\text{ cm}^2",
    "\\frac{100}{3}\\%",
    "y = -\\frac{1}{2}x + 3",
    "3x^2",
    "\\frac{x-3}{2}",
    "2^n",
    "\\frac{n(n+1)}{2}",
    "\\frac{\\sqrt{3}}{4}",
    "\\frac{1}{2}",
    "-\\frac{3}{4}",
    "55",
    "\\frac{7}{2}",
    "\\frac{3^n}{2}",
    "3\\left(\\frac{1}{2}\\right)^n",
    "\\emptyset",
    "5\\text{ J}",
    "\\frac{kQq}{r^2}",
    "\\frac{Q}{4\\pi\\varepsilon_0 r^2}",
    "\\frac{\\pi}{2}+k\\pi, k \\in \\mathbb{Z}",
    "2k\\pi",
    "2n\\pi",
    "\\frac{GMm}{r^2}",
    "-\\frac{GMm}{r}",
    "M-m",
    "M+2m",
    "2N+n",
    "A-a",
    "\\frac{X}{x+X}",
    "\\sqrt{R^2-r^2}",
    "\\pi(R^2-r^2)",
    "\\frac{4}{3}\\pi(R^3-r^3)",
    "\\frac{\\pi}{6}",
    "\\sqrt{3}",
    "-\\frac{2}{3}",
    "\\frac{\\sqrt{6}}{3}",
    "\\frac{\\sqrt{3}}{3}",
    "\\frac{3\\sqrt{3}}{2}",
    "\\frac{5\\sqrt{2}}{2}",
    "4\\sqrt{2}-4",
    "\\sqrt[3]{2}",
    "2^{1/3}",
    "\\frac{1+\\sqrt{5}}{2}",
    "3+2\\sqrt{2}",
    "\\sqrt{2}+\\sqrt{3}",
    "\\frac{500\\pi}{3}",
    "2\\pi",
    "\\pi - 2",
    "3+4i",
    "2-i",
    "\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i",
    "-\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i",
    "1+i",
    "-1-i",
    "(-\\infty, 2) \\cup (3, \\infty)",
    "[1, 5)",
    "(0, \\infty)",
    "(-\\infty, \\infty)",
    "(-\\infty, -2] \\cup [2, \\infty)",
    "(-\\infty, 0) \\cup (0, \\infty)",
    "[-2, 3]",
    "(3, -\\frac{\\pi}{2})",
    "(2\\sqrt{2}, \\frac{\\pi}{4})",
    "(1, -2, 3)",
    "x^2+x-2",
    "(x-1)(x+2)",
    "x^3-6x^2+11x-6",
    "2x^2+3x-5",
    "(x^2+2x+2)(x^2-2x+2)",
    "3x+2",
    "-x^2+4x-3",
    "x^2-1",
    "4x^2-12x+9",
    "\\frac{x+1}{x-1}",
    "\\frac{1}{x}",
    "6x^2y",
    "a^2 - b^2",
    "\\log_2 3",
    "\\frac{\\ln 3}{\\ln 2}",
    "2\\ln 2",
    "\\ln 4",
    "\\frac{1}{2}\\ln 3",
    "\\ln 2",
    "e^2",
    "e^2-1",
    "\\log_3 5",
    "1+\\log_2 3",
    "\\log_2 6",
    "2^{x+1}",
    "e^{-x}",
    "\\frac{\\ln 2}{2}",
    "\\sin x",
    "\\tan\\theta",
    "2\\sin x\\cos x",
    "\\cos^2 x",
    "\\sec x",
    "\\frac{\\sqrt{3}}{2}",
    "\\frac{\\pi}{6}, \\frac{5\\pi}{6}",
    "\\arctan 2",
    "\\arcsin\\frac{1}{3}",
    "\\cos\\theta",
    "-\\frac{\\sqrt{2}}{2}",
    "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
    "5\\text{ m/s}",
    "\\$12.50",
    "10\\sqrt{2}\\%",
    "y = 2x + 1",
    "(x-1)^2 + (y-2)^2 = 9",
    "x^2+y^2=25",
    "\\frac{x^2}{4}+\\frac{y^2}{9}=1",
    "y^2 = 8x",
    "x = 3",
    "2x+3y-6=0",
    "3x - 2y + z = 7",
    "n^2+1",
    "1000",
    "0.5",
    "25\\%",
    "\\binom{n}{2}",
    "\\frac{n(n+1)(2n+1)}{6}",
    "2^{n-1}",
    "\\frac{1}{x+1}",
    "\\frac{\\sqrt{6}-\\sqrt{2}}{4}",
    "(-3, 3)",
    "\\mathbb{R}",
    "5\\text{ N}",
    "\\Delta x",
    "\\frac{\\Delta}{2}",
    "\\overline{AC}",
    "\\angle BAC",
    "\\frac{abc}{4R}",
    "2\\pi R",
    "\\pi R^2",
    "\\frac{1}{2}ab\\sin C",
    "\\frac{1}{2}mv^2",
    "\\frac{v^2}{r}",
    "\\sqrt{\\frac{2gh}{3}}",
    "mg\\sin\\theta",
    "\\frac{mgL}{2}",
    "\\frac{\\mu_0 I}{2\\pi r}",
    "\\frac{\\mu_0 NI}{L}",
    "\\frac{V^2}{R}",
    "I^2R",
    "\\frac{1}{2}CV^2",
    "\\frac{1}{2}+\\frac{1}{2}i",
    "-\\frac{1}{2}i",
    "\\frac{i}{2}",
    "1+2i",
    "n(n+1)",
    "(1, 2), (3, 4)",
    "\\{(1, 2), (3, 4)\\}",
    "(-\\infty, 1)",
    "2xyz",
    "abc+1",
    "\\frac{abc}{2}",
    "2\\pi r",
    "-\\frac{\\sqrt{2}}{6}",
    "\\frac{\\sqrt{3}}{4}a^2",
    "\\frac{\\ln 5}{\\ln 11}",
    "\\frac{\\ln 7}{\\ln 21}",
    "\\frac{\\sqrt[3]{4}}{2}",
    "\\frac{\\sqrt{2}}{2}",
    "\\frac{3^{n-1}}{2}",
    "\\frac{q}{2}",
    "\\frac{v}{r}",
    "\\frac{mg}{k}",
    "\\frac{(M-m)g}{M+m}",
    "\\frac{Mm}{M+m}",
    "(M+m)g",
    "(M-m)g",
    "\\sqrt{\\frac{2gh(M-m)}{M+m}}",
    "X^2 - x^2",
    "\\frac{A}{a}",
    "\\frac{V}{v}",
    "\\frac{Rr}{R+r}",
    "\\pi R^2 - \\pi r^2",
    "\\pi(R^2 - r^2)",
    "\\frac{4}{3}\\pi (R^3 - r^3)",
    "\\frac{Nn}{N+n}",
    "\\angle ABC",
    "1",
    "8",
    "50",
    "144",
    "\\frac{3}{2}",
    "[0.5, 2]",
    "\\{0.5, 2\\}",
    "(1.5, -2)",
    "y = 0.5x + 3",
    "x = 0.5",
    "0.5\\pi",
    "12",  # the text around a tag or box
    "3",
    "-3",  # one value written twice
    "0.05",
    "0.33",
    "0.7",
    "2\\sqrt{2}",  # Unicode math
    "13",  # labelled candidates ('Guess 1: 12'); an approximation, a sign or an operation around a box
    "28.27",
    "\\sqrt[4]{2}",
    "-12",
    "3.14",
    "0.67",
    "28.3",
    "28",
    "\\pi",
    "30",  # a degree sign after a box
    "24",  # a later sentence about another quantity, read as a correction
    "7",
    "450",
    "2\\sqrt{3}",
    "x^2+4",  # a chain of '=' whose earlier side computes the last
    "4\\pi",
    "6\\sqrt{2}",
    "17",
    "21",
    "45",  # a stated answer and its check
    "14",
    "15",  # a denied last number
    "1/3",
    "120",
    "150",
    "35",
    "4",
    "40",
    "42",
    "64",
    "9",  # a stated sentence that goes on past its number, then a check
    "0.12",
    "1/2",
    "100",  # a bracket whose text before it does not end at the number
    "70000",  # an answer recomputed after a check cue
    "1/12",  # a fraction at a check line's end
    "1200000",
    "15000",
    "16",
    "2000000000",
    "2400",
    "2500000",
    "3000",
    "3000000",
    "48",
    "500",
    "5000000",
    "6000000",  # a scale word in the stated answer, then a one-line check
    "20",  # a denial of an operand after the answer, in the same sentence
]
ARITHMETIC_GOLDS = ["2", "6", "30", "10", "13", "\\frac{3}{4}", "9", "1234.5", "-19", "0.19", "19", "3", "1", "-5"]
PROBLEMS |= {f"math: {g}": {"task": "math", "answer": g} for g in MATH_GOLDS}
PROBLEMS |= {f"arithmetic: {g}": {"task": "arithmetic", "answer": g} for g in ARITHMETIC_GOLDS}
# problems kept as data, not code: retrieval problems with sources of their own, and a few code problems
PROBLEMS |= json.loads((DATA / "redteam-problems.json").read_text(encoding="utf-8"))
# the shipped HumanEval problems by prompt id ("humaneval-032"): their tests as the code tier gets them
PROBLEMS |= {r["prompt_id"]: {k: r[k] for k in ("task", "answer", "tests")} for r in humaneval.generate()}


def _score(tmp_path: Path, entries: list[dict]) -> list[dict]:
    """Each entry against its own copy of its problem (so groups do not mix), in corpus order; an
    entry with "code_reward": "fraction" is scored under that config (the default is all_pass)."""
    rows: dict[str, dict] = {}
    for mode in sorted({e.get("code_reward", "all_pass") for e in entries}):
        some = [(i, e) for i, e in enumerate(entries) if e.get("code_reward", "all_pass") == mode]
        problems = [{"prompt_id": f"rt{i:05d}", "prompt": e["attack"], **PROBLEMS[e["problem"]]} for i, e in some]
        responses = [(f"rt{i:05d}", e["response"]) for i, e in some]
        (tmp_path / mode).mkdir(parents=True, exist_ok=True)
        table, _ = score_with_stats(
            *write_inputs(tmp_path / mode, problems, responses), VerifySection(code_timeout_s=5.0, code_reward=mode)
        )
        rows |= {r["prompt_id"]: r for r in table.to_pylist()}
    return [rows[k] for k in sorted(rows)]


def _misjudged(entries: list[dict], rows: list[dict]) -> list[str]:
    bad = []
    for e, row in zip(entries, rows, strict=True):
        cited = e.get("citations_supported")
        if row["reward"] != pytest.approx(e["reward"]) or (cited is not None and row["citations_supported"] != cited):
            bad.append(
                f"{e['tier']}: {e['attack']}: reward {row['reward']} (want {e['reward']}), "
                f"cited {row['citations_supported']}: {row['reason'][:200]}"
            )
    return bad


def test_the_corpus_covers_every_tier_with_40_attacks():
    attacks = [e for e in CORPUS if "keeps its reward" not in e["attack"]]
    assert len(attacks) >= 40
    assert {e["tier"] for e in attacks} == {"code", "math", "retrieval", "logic"}
    for e in CORPUS:  # a wrong answer earns 0; a right one 1, plus its citations' share
        paid = e["reward"] - 0.5 * (e.get("citations_supported") or 0) / max(1, e["response"].count("<cite>"))
        if e.get("code_reward") == "fraction":  # the share of the asserts it passes: under 1 when wrong
            assert (e["reward"] == 1.0) == ("keeps its reward" in e["attack"]), e["attack"]
            continue
        assert e["reward"] == 0.0 or paid == 1.0, e["attack"]


def _family(e: dict) -> str:
    """A case's family in its test id: what it must get. paid (a right answer keeps its reward),
    refused (a wrong answer, or a form the contract does not list, earns 0), partial (code_reward =
    fraction: the share of the asserts it passes)."""
    if e.get("code_reward") == "fraction" and 0 < e["reward"] < 1:
        return "partial"
    return "refused" if e["reward"] == 0 else "paid"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def _cases(table: str, entries: list[dict]) -> list:
    """One pytest case per entry, named table/tier/family/number-attack."""
    return [
        pytest.param(table, k, id=f"{table}/{e['tier']}/{_family(e)}/{k:04d}-{_slug(e['attack'])}") for k, e in enumerate(entries)
    ]


TABLES = {"redteam": CORPUS, "refused": REFUSED, "paid": PAID}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], list[dict]]:
    """(table, part) -> that part's rows, scored once in one verify pass; part "code" needs the sandbox."""
    done: dict[tuple[str, str], list[dict]] = {}

    def get(table: str, part: str) -> list[dict]:
        if (table, part) not in done:
            if part == "code":
                try:
                    sandbox_mode()
                except SandboxError as err:
                    pytest.skip(f"no sandbox here: {err}")
            entries = [e for e in TABLES[table] if (e["tier"] == "code") == (part == "code")]
            done[table, part] = _score(tmp_path_factory.mktemp(f"{table}-{part}"), entries)
        return done[table, part]

    return get


def _entry_and_row(scored: Callable[[str, str], list[dict]], table: str, k: int) -> tuple[dict, dict]:
    entries = TABLES[table]
    part = "code" if entries[k]["tier"] == "code" else "text"
    same = [j for j, e in enumerate(entries) if (e["tier"] == "code") == (part == "code")]
    return entries[k], scored(table, part)[same.index(k)]


@pytest.mark.parametrize(("table", "k"), _cases("redteam", CORPUS))
def test_attack_gets_its_stated_reward(scored: Callable[[str, str], list[dict]], table: str, k: int):
    e, row = _entry_and_row(scored, table, k)
    assert _misjudged([e], [row]) == []
    if e["tier"] == "code":
        assert row["verifier"] == "sandbox"


@pytest.mark.parametrize(("table", "k"), _cases("refused", REFUSED) + _cases("paid", PAID))
def test_entry_the_contract_changed_gets_its_reward_and_reason(scored: Callable[[str, str], list[dict]], table: str, k: int):
    e, row = _entry_and_row(scored, table, k)
    assert (row["reward"], row["reason"]) == (e["reward"], e["reason"])
    if table == "refused":
        assert row["reward"] < 1.0 and not row["correct"]


def _gold_response(row: dict) -> str:
    if row["task"] == "retrieval":
        return f"<cite>{json.loads(row['meta'])['support']}</cite><answer>{row['answer']}</answer>"
    return f"<answer>{row['answer']}</answer>"


def test_shipped_golds_keep_their_reward(tmp_path: Path):
    rows = (
        arithmetic.generate(seed=0, n_train=150, n_test=50, max_operand=60, ops="+-*") + logic.generate() + retrieval.generate()
    )
    table, _ = score_with_stats(
        *write_inputs(tmp_path, rows, [(r["prompt_id"], _gold_response(r)) for r in rows]), VerifySection()
    )
    scored = table.to_pylist()
    assert len(scored) == len(rows)
    wrong = [(r["prompt_id"], r["reason"]) for r in scored if not r["correct"]]
    assert wrong == []
    uncited = [(r["prompt_id"], r["reason"]) for r in scored if r["task"] == "retrieval" and r["citations_supported"] != 1]
    assert uncited == []


def test_the_tiny_warm_up_target_earns_full_citation_credit_on_every_shipped_problem(tmp_path: Path):
    """rlvr.models.tiny teaches `<cite>support</cite> <answer>...</answer>`: every shipped retrieval problem pays it in full."""
    from rlvr.models.tiny import target

    rows = retrieval.generate()
    table, _ = score_with_stats(*write_inputs(tmp_path, rows, [(r["prompt_id"], target(r)) for r in rows]), VerifySection())
    scored = table.to_pylist()
    assert len(scored) == len(rows) == retrieval.N_PROBLEMS
    assert [(r["prompt_id"], r["reason"]) for r in scored if (r["citations"], r["citations_supported"]) != (1, 1)] == []
    assert all(r["reward"] == 1.5 for r in scored)
