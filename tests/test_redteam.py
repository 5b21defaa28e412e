"""Red team: hostile responses against every verifier tier, each with the reward it must get.

tests/data/redteam.json holds the corpus: {tier, attack, problem, response, reward[, citations_supported]}
for the code tier (HumanEval-style asserts and stdin/stdout; a problem named "humaneval-NNN" is the
shipped HumanEval row), the math tier (SQL), retrieval citations and logic formulas (truth tables). Every entry is scored by the real verify pass (rlvr.verify.score_with_stats: DuckDB, the
sandbox) under the default config; a wrong response must get 0 for correctness, a correct one
keeps its reward. The shipped golds of every non-code task keep theirs too (HumanEval's 164
canonical solutions and the stdio references: tests/test_humaneval.py, tests/test_stdio.py).

Run: .venv/bin/python -m pytest -q tests/test_redteam.py   (the code part needs the sandbox: root,
or an ordinary user with unprivileged user namespaces; ~20 s on 2 cores)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rlvr.data import arithmetic, humaneval, logic, retrieval
from verify_inputs import write_inputs

from rlvr.config import VerifySection
from rlvr.verify import score_with_stats
from rlvr.verify.code import SandboxError, io_tests_json, sandbox_mode
from rlvr.verify.code import prompt as code_prompt

CORPUS = json.loads((Path(__file__).parent / "data" / "redteam.json").read_text(encoding="utf-8"))
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
TOLL = [  # red team round 9: the gold 29 and 3.5 inside other numbers (a decimal, a thousands group, a range)
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
MILL_ROUTE = [  # red team round 9: sentence ends after an abbreviation and a one-letter word; an initial that is none
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
    # a test that expects a TypeError, and one that maps the candidate over a list (issue 19, round 3)
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
    # the math tier's issue-19 cases: the question is the problem's own prompt where it matters
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
    # round 4: sets against tuples and intervals, letters in another case, radicals and scientific notation
    "set12": {"task": "math", "answer": "\\{1, 2\\}"},
    "tuple12": {"task": "math", "answer": "(1, 2)"},
    "2sqrt2/3": {"task": "math", "answer": "\\frac{2\\sqrt{2}}{3}"},
    "0.25": {"task": "arithmetic", "answer": "0.25"},
    "1e3": {"task": "arithmetic", "answer": "1e3"},
    "[0,1]": {"task": "math", "answer": "[0, 1]"},
    "[2,inf)": {"task": "math", "answer": "[2, \\infty)"},
    # rounds 5 to 8: the red team's golds (problem named by task and gold)
    "math: 2": {"task": "math", "answer": "2"},
    "arithmetic: 2": {"task": "arithmetic", "answer": "2"},
    "math: 10": {"task": "math", "answer": "10"},
    "arithmetic: 6": {"task": "arithmetic", "answer": "6"},
    "arithmetic: 30": {"task": "arithmetic", "answer": "30"},
    "arithmetic: 10": {"task": "arithmetic", "answer": "10"},
    "math: \\frac{\\pi}{4}": {"task": "math", "answer": "\\frac{\\pi}{4}"},
    "math: 6\\pi": {"task": "math", "answer": "6\\pi"},
    "math: 2x+3": {"task": "math", "answer": "2x+3"},
    "math: \\frac{x}{2}": {"task": "math", "answer": "\\frac{x}{2}"},
    "math: n^2": {"task": "math", "answer": "n^2"},
    "math: 3\\sqrt{2}": {"task": "math", "answer": "3\\sqrt{2}"},
    "math: \\frac{1}{3}": {"task": "math", "answer": "\\frac{1}{3}"},
    "arithmetic: 13": {"task": "arithmetic", "answer": "13"},
    "arithmetic: \\frac{3}{4}": {"task": "arithmetic", "answer": "\\frac{3}{4}"},
    "math: 4\\sqrt{2}": {"task": "math", "answer": "4\\sqrt{2}"},
    "arithmetic: 9": {"task": "arithmetic", "answer": "9"},
    "math: 6\\sqrt{3}": {"task": "math", "answer": "6\\sqrt{3}"},
    "math: 12\\pi": {"task": "math", "answer": "12\\pi"},
    "math: (-\\infty, 3]": {"task": "math", "answer": "(-\\infty, 3]"},
    "math: (-\\infty, -2) \\cup (3, \\infty)": {"task": "math", "answer": "(-\\infty, -2) \\cup (3, \\infty)"},
    "arithmetic: 1234.5": {"task": "arithmetic", "answer": "1234.5"},
    "arithmetic: -19": {"task": "arithmetic", "answer": "-19"},
    "arithmetic: 0.19": {"task": "arithmetic", "answer": "0.19"},
    "math: 2e": {"task": "math", "answer": "2e"},
    "math: \\frac{\\pi}{3}": {"task": "math", "answer": "\\frac{\\pi}{3}"},
    "math: \\frac{\\pi}{2}+k\\pi": {"task": "math", "answer": "\\frac{\\pi}{2}+k\\pi"},
    "math: x+1": {"task": "math", "answer": "x+1"},
    "math: 2k+1": {"task": "math", "answer": "2k+1"},
    "math: \\pi": {"task": "math", "answer": "\\pi"},
    "math: \\sqrt{2}": {"task": "math", "answer": "\\sqrt{2}"},
    "math: x = 2": {"task": "math", "answer": "x = 2"},
    "math: 5": {"task": "math", "answer": "5"},
    "math: 3, 5": {"task": "math", "answer": "3, 5"},
    "math: -3, 3": {"task": "math", "answer": "-3, 3"},
    "math: 5\\sqrt{2}": {"task": "math", "answer": "5\\sqrt{2}"},
    "math: 602000000000000000000000": {"task": "math", "answer": "602000000000000000000000"},
    "math: 0.0019": {"task": "math", "answer": "0.0019"},
    "math: x = -1": {"task": "math", "answer": "x = -1"},
    "math: y = 2x+1": {"task": "math", "answer": "y = 2x+1"},
    "math: 3\\frac{1}{2}": {"task": "math", "answer": "3\\frac{1}{2}"},
    "math: -2\\frac{1}{4}": {"task": "math", "answer": "-2\\frac{1}{4}"},
    "math: \\frac{5}{2}": {"task": "math", "answer": "\\frac{5}{2}"},
    "math: -\\frac{5}{2}": {"task": "math", "answer": "-\\frac{5}{2}"},
    "math: 0.019": {"task": "math", "answer": "0.019"},
    "math: 60^\\circ": {"task": "math", "answer": "60^\\circ"},
    "math: k\\pi": {"task": "math", "answer": "k\\pi"},
    "math: [2, 5]": {"task": "math", "answer": "[2, 5]"},
    "math: f(x) = x^2": {"task": "math", "answer": "f(x) = x^2"},
    "math: (\\frac{1}{2}, 3)": {"task": "math", "answer": "(\\frac{1}{2}, 3)"},
    "math: \\frac{1}{4}x+1": {"task": "math", "answer": "\\frac{1}{4}x+1"},
    "math: -\\frac{\\sqrt{3}}{4}": {"task": "math", "answer": "-\\frac{\\sqrt{3}}{4}"},
    "math: -19": {"task": "math", "answer": "-19"},
    "math: 0.19": {"task": "math", "answer": "0.19"},
    "exact: A": {"task": "exact", "answer": "A"},
    "exact: -12": {"task": "exact", "answer": "-12"},
    "exact: 12": {"task": "exact", "answer": "12"},
    "math: -\\frac{7}{2}": {"task": "math", "answer": "-\\frac{7}{2}"},
    "math: (0.5, 3)": {"task": "math", "answer": "(0.5, 3)"},
    "math: [0, 1)": {"task": "math", "answer": "[0, 1)"},
    "math: \\frac{\\pi}{2}+2k\\pi, k \\in \\mathbb{Z}": {"task": "math", "answer": "\\frac{\\pi}{2}+2k\\pi, k \\in \\mathbb{Z}"},
    "math: \\frac{3\\pi}{4}": {"task": "math", "answer": "\\frac{3\\pi}{4}"},
    "math: 36\\pi": {"task": "math", "answer": "36\\pi"},
    "math: \\frac{9\\pi}{2}": {"task": "math", "answer": "\\frac{9\\pi}{2}"},
    "math: \\{1, 2, 3\\}": {"task": "math", "answer": "\\{1, 2, 3\\}"},
    "math: 1, 2": {"task": "math", "answer": "1, 2"},
    "math: -2, 2": {"task": "math", "answer": "-2, 2"},
    "math: 1\\pm\\sqrt{2}": {"task": "math", "answer": "1\\pm\\sqrt{2}"},
    "math: 1+\\sqrt{2}, 1-\\sqrt{2}": {"task": "math", "answer": "1+\\sqrt{2}, 1-\\sqrt{2}"},
    "math: -1, \\frac{1}{2}": {"task": "math", "answer": "-1, \\frac{1}{2}"},
    "math: 2, 3, 4": {"task": "math", "answer": "2, 3, 4"},
    "math: \\left(\\frac{1}{2}, 3\\right)": {"task": "math", "answer": "\\left(\\frac{1}{2}, 3\\right)"},
    "math: \\frac{\\pi}{4}+k\\pi": {"task": "math", "answer": "\\frac{\\pi}{4}+k\\pi"},
    "math: \\begin{pmatrix} 1/2 \\\\ -1 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 1/2 \\\\ -1 \\end{pmatrix}",
    },
    "math: 30^\\circ": {"task": "math", "answer": "30^\\circ"},
    "math: 12\\text{ cm}^2": {"task": "math", "answer": "12\\text{ cm}^2"},
    "math: \\frac{100}{3}\\%": {"task": "math", "answer": "\\frac{100}{3}\\%"},
    "math: y = -\\frac{1}{2}x + 3": {"task": "math", "answer": "y = -\\frac{1}{2}x + 3"},
    "math: 3x^2": {"task": "math", "answer": "3x^2"},
    "math: \\frac{x-3}{2}": {"task": "math", "answer": "\\frac{x-3}{2}"},
    "math: 2^n": {"task": "math", "answer": "2^n"},
    "math: \\frac{n(n+1)}{2}": {"task": "math", "answer": "\\frac{n(n+1)}{2}"},
    "math: \\frac{\\sqrt{3}}{4}": {"task": "math", "answer": "\\frac{\\sqrt{3}}{4}"},
    "math: \\frac{1}{2}": {"task": "math", "answer": "\\frac{1}{2}"},
    "math: -\\frac{3}{4}": {"task": "math", "answer": "-\\frac{3}{4}"},
    "math: 55": {"task": "math", "answer": "55"},
    "math: \\frac{7}{2}": {"task": "math", "answer": "\\frac{7}{2}"},
    "math: \\frac{3^n}{2}": {"task": "math", "answer": "\\frac{3^n}{2}"},
    "math: 3\\left(\\frac{1}{2}\\right)^n": {"task": "math", "answer": "3\\left(\\frac{1}{2}\\right)^n"},
    "math: \\emptyset": {"task": "math", "answer": "\\emptyset"},
    "math: 5\\text{ J}": {"task": "math", "answer": "5\\text{ J}"},
    "math: \\frac{kQq}{r^2}": {"task": "math", "answer": "\\frac{kQq}{r^2}"},
    "math: \\frac{Q}{4\\pi\\varepsilon_0 r^2}": {"task": "math", "answer": "\\frac{Q}{4\\pi\\varepsilon_0 r^2}"},
    "math: \\frac{\\pi}{2}+k\\pi, k \\in \\mathbb{Z}": {"task": "math", "answer": "\\frac{\\pi}{2}+k\\pi, k \\in \\mathbb{Z}"},
    "math: 2k\\pi": {"task": "math", "answer": "2k\\pi"},
    "math: 2n\\pi": {"task": "math", "answer": "2n\\pi"},
    "math: \\frac{GMm}{r^2}": {"task": "math", "answer": "\\frac{GMm}{r^2}"},
    "math: -\\frac{GMm}{r}": {"task": "math", "answer": "-\\frac{GMm}{r}"},
    "math: M-m": {"task": "math", "answer": "M-m"},
    "math: M+2m": {"task": "math", "answer": "M+2m"},
    "math: 2N+n": {"task": "math", "answer": "2N+n"},
    "math: A-a": {"task": "math", "answer": "A-a"},
    "math: \\frac{X}{x+X}": {"task": "math", "answer": "\\frac{X}{x+X}"},
    "math: \\sqrt{R^2-r^2}": {"task": "math", "answer": "\\sqrt{R^2-r^2}"},
    "math: \\pi(R^2-r^2)": {"task": "math", "answer": "\\pi(R^2-r^2)"},
    "math: \\frac{4}{3}\\pi(R^3-r^3)": {"task": "math", "answer": "\\frac{4}{3}\\pi(R^3-r^3)"},
    "math: \\frac{\\pi}{6}": {"task": "math", "answer": "\\frac{\\pi}{6}"},
    "math: \\sqrt{3}": {"task": "math", "answer": "\\sqrt{3}"},
    "math: -\\frac{2}{3}": {"task": "math", "answer": "-\\frac{2}{3}"},
    "math: \\frac{\\sqrt{6}}{3}": {"task": "math", "answer": "\\frac{\\sqrt{6}}{3}"},
    "math: \\frac{\\sqrt{3}}{3}": {"task": "math", "answer": "\\frac{\\sqrt{3}}{3}"},
    "math: \\frac{3\\sqrt{3}}{2}": {"task": "math", "answer": "\\frac{3\\sqrt{3}}{2}"},
    "math: \\frac{5\\sqrt{2}}{2}": {"task": "math", "answer": "\\frac{5\\sqrt{2}}{2}"},
    "math: 4\\sqrt{2}-4": {"task": "math", "answer": "4\\sqrt{2}-4"},
    "math: \\sqrt[3]{2}": {"task": "math", "answer": "\\sqrt[3]{2}"},
    "math: 2^{1/3}": {"task": "math", "answer": "2^{1/3}"},
    "math: \\frac{1+\\sqrt{5}}{2}": {"task": "math", "answer": "\\frac{1+\\sqrt{5}}{2}"},
    "math: 3+2\\sqrt{2}": {"task": "math", "answer": "3+2\\sqrt{2}"},
    "math: \\sqrt{2}+\\sqrt{3}": {"task": "math", "answer": "\\sqrt{2}+\\sqrt{3}"},
    "math: \\frac{500\\pi}{3}": {"task": "math", "answer": "\\frac{500\\pi}{3}"},
    "math: 2\\pi": {"task": "math", "answer": "2\\pi"},
    "math: \\pi - 2": {"task": "math", "answer": "\\pi - 2"},
    "math: 3+4i": {"task": "math", "answer": "3+4i"},
    "math: 2-i": {"task": "math", "answer": "2-i"},
    "math: \\frac{1}{2}+\\frac{\\sqrt{3}}{2}i": {"task": "math", "answer": "\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i"},
    "math: -\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i": {"task": "math", "answer": "-\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i"},
    "math: 1+i": {"task": "math", "answer": "1+i"},
    "math: -1-i": {"task": "math", "answer": "-1-i"},
    "math: (-\\infty, 2) \\cup (3, \\infty)": {"task": "math", "answer": "(-\\infty, 2) \\cup (3, \\infty)"},
    "math: [1, 5)": {"task": "math", "answer": "[1, 5)"},
    "math: (0, \\infty)": {"task": "math", "answer": "(0, \\infty)"},
    "math: (-\\infty, \\infty)": {"task": "math", "answer": "(-\\infty, \\infty)"},
    "math: (-\\infty, -2] \\cup [2, \\infty)": {"task": "math", "answer": "(-\\infty, -2] \\cup [2, \\infty)"},
    "math: (-\\infty, 0) \\cup (0, \\infty)": {"task": "math", "answer": "(-\\infty, 0) \\cup (0, \\infty)"},
    "math: [-2, 3]": {"task": "math", "answer": "[-2, 3]"},
    "math: (3, -\\frac{\\pi}{2})": {"task": "math", "answer": "(3, -\\frac{\\pi}{2})"},
    "math: (2\\sqrt{2}, \\frac{\\pi}{4})": {"task": "math", "answer": "(2\\sqrt{2}, \\frac{\\pi}{4})"},
    "math: (1, -2, 3)": {"task": "math", "answer": "(1, -2, 3)"},
    "math: x^2+x-2": {"task": "math", "answer": "x^2+x-2"},
    "math: (x-1)(x+2)": {"task": "math", "answer": "(x-1)(x+2)"},
    "math: x^3-6x^2+11x-6": {"task": "math", "answer": "x^3-6x^2+11x-6"},
    "math: 2x^2+3x-5": {"task": "math", "answer": "2x^2+3x-5"},
    "math: (x^2+2x+2)(x^2-2x+2)": {"task": "math", "answer": "(x^2+2x+2)(x^2-2x+2)"},
    "math: 3x+2": {"task": "math", "answer": "3x+2"},
    "math: -x^2+4x-3": {"task": "math", "answer": "-x^2+4x-3"},
    "math: x^2-1": {"task": "math", "answer": "x^2-1"},
    "math: 4x^2-12x+9": {"task": "math", "answer": "4x^2-12x+9"},
    "math: \\frac{x+1}{x-1}": {"task": "math", "answer": "\\frac{x+1}{x-1}"},
    "math: \\frac{1}{x}": {"task": "math", "answer": "\\frac{1}{x}"},
    "math: 6x^2y": {"task": "math", "answer": "6x^2y"},
    "math: a^2 - b^2": {"task": "math", "answer": "a^2 - b^2"},
    "math: \\log_2 3": {"task": "math", "answer": "\\log_2 3"},
    "math: \\frac{\\ln 3}{\\ln 2}": {"task": "math", "answer": "\\frac{\\ln 3}{\\ln 2}"},
    "math: 2\\ln 2": {"task": "math", "answer": "2\\ln 2"},
    "math: \\ln 4": {"task": "math", "answer": "\\ln 4"},
    "math: \\frac{1}{2}\\ln 3": {"task": "math", "answer": "\\frac{1}{2}\\ln 3"},
    "math: \\ln 2": {"task": "math", "answer": "\\ln 2"},
    "math: e^2": {"task": "math", "answer": "e^2"},
    "math: e^2-1": {"task": "math", "answer": "e^2-1"},
    "math: \\log_3 5": {"task": "math", "answer": "\\log_3 5"},
    "math: 1+\\log_2 3": {"task": "math", "answer": "1+\\log_2 3"},
    "math: \\log_2 6": {"task": "math", "answer": "\\log_2 6"},
    "math: 2^{x+1}": {"task": "math", "answer": "2^{x+1}"},
    "math: e^{-x}": {"task": "math", "answer": "e^{-x}"},
    "math: \\frac{\\ln 2}{2}": {"task": "math", "answer": "\\frac{\\ln 2}{2}"},
    "math: \\sin x": {"task": "math", "answer": "\\sin x"},
    "math: \\tan\\theta": {"task": "math", "answer": "\\tan\\theta"},
    "math: 2\\sin x\\cos x": {"task": "math", "answer": "2\\sin x\\cos x"},
    "math: \\cos^2 x": {"task": "math", "answer": "\\cos^2 x"},
    "math: \\sec x": {"task": "math", "answer": "\\sec x"},
    "math: \\frac{\\sqrt{3}}{2}": {"task": "math", "answer": "\\frac{\\sqrt{3}}{2}"},
    "math: \\frac{\\pi}{6}, \\frac{5\\pi}{6}": {"task": "math", "answer": "\\frac{\\pi}{6}, \\frac{5\\pi}{6}"},
    "math: \\arctan 2": {"task": "math", "answer": "\\arctan 2"},
    "math: \\arcsin\\frac{1}{3}": {"task": "math", "answer": "\\arcsin\\frac{1}{3}"},
    "math: \\cos\\theta": {"task": "math", "answer": "\\cos\\theta"},
    "math: -\\frac{\\sqrt{2}}{2}": {"task": "math", "answer": "-\\frac{\\sqrt{2}}{2}"},
    "math: \\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}": {"task": "math", "answer": "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"},
    "math: \\begin{pmatrix} \\frac{2}{5} \\\\ -\\frac{1}{5} \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} \\frac{2}{5} \\\\ -\\frac{1}{5} \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} 1 & 1 \\\\ 0 & 1 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 1 & 1 \\\\ 0 & 1 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} 0 & -1 \\\\ 1 & 0 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 0 & -1 \\\\ 1 & 0 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} 3 \\\\ -1 \\\\ 0 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} 3 \\\\ -1 \\\\ 0 \\end{pmatrix}",
    },
    "math: \\begin{pmatrix} \\sqrt{2} \\\\ 1 \\end{pmatrix}": {
        "task": "math",
        "answer": "\\begin{pmatrix} \\sqrt{2} \\\\ 1 \\end{pmatrix}",
    },
    "math: 5\\text{ m/s}": {"task": "math", "answer": "5\\text{ m/s}"},
    "math: \\$12.50": {"task": "math", "answer": "\\$12.50"},
    "math: 10\\sqrt{2}\\%": {"task": "math", "answer": "10\\sqrt{2}\\%"},
    "math: y = 2x + 1": {"task": "math", "answer": "y = 2x + 1"},
    "math: (x-1)^2 + (y-2)^2 = 9": {"task": "math", "answer": "(x-1)^2 + (y-2)^2 = 9"},
    "math: x^2+y^2=25": {"task": "math", "answer": "x^2+y^2=25"},
    "math: \\frac{x^2}{4}+\\frac{y^2}{9}=1": {"task": "math", "answer": "\\frac{x^2}{4}+\\frac{y^2}{9}=1"},
    "math: y^2 = 8x": {"task": "math", "answer": "y^2 = 8x"},
    "math: x = 3": {"task": "math", "answer": "x = 3"},
    "math: 2x+3y-6=0": {"task": "math", "answer": "2x+3y-6=0"},
    "math: 3x - 2y + z = 7": {"task": "math", "answer": "3x - 2y + z = 7"},
    "math: n^2+1": {"task": "math", "answer": "n^2+1"},
    "math: 1000": {"task": "math", "answer": "1000"},
    "math: 0.5": {"task": "math", "answer": "0.5"},
    "math: 25\\%": {"task": "math", "answer": "25\\%"},
    "math: \\binom{n}{2}": {"task": "math", "answer": "\\binom{n}{2}"},
    "math: \\frac{n(n+1)(2n+1)}{6}": {"task": "math", "answer": "\\frac{n(n+1)(2n+1)}{6}"},
    "math: 2^{n-1}": {"task": "math", "answer": "2^{n-1}"},
    "math: \\frac{1}{x+1}": {"task": "math", "answer": "\\frac{1}{x+1}"},
    "math: \\frac{\\sqrt{6}-\\sqrt{2}}{4}": {"task": "math", "answer": "\\frac{\\sqrt{6}-\\sqrt{2}}{4}"},
    "math: (-3, 3)": {"task": "math", "answer": "(-3, 3)"},
    "math: \\mathbb{R}": {"task": "math", "answer": "\\mathbb{R}"},
    "math: 5\\text{ N}": {"task": "math", "answer": "5\\text{ N}"},
    "math: \\Delta x": {"task": "math", "answer": "\\Delta x"},
    "math: \\frac{\\Delta}{2}": {"task": "math", "answer": "\\frac{\\Delta}{2}"},
    "math: \\overline{AC}": {"task": "math", "answer": "\\overline{AC}"},
    "math: \\angle BAC": {"task": "math", "answer": "\\angle BAC"},
    "math: \\frac{abc}{4R}": {"task": "math", "answer": "\\frac{abc}{4R}"},
    "math: 2\\pi R": {"task": "math", "answer": "2\\pi R"},
    "math: \\pi R^2": {"task": "math", "answer": "\\pi R^2"},
    "math: \\frac{1}{2}ab\\sin C": {"task": "math", "answer": "\\frac{1}{2}ab\\sin C"},
    "math: \\frac{1}{2}mv^2": {"task": "math", "answer": "\\frac{1}{2}mv^2"},
    "math: \\frac{v^2}{r}": {"task": "math", "answer": "\\frac{v^2}{r}"},
    "math: \\sqrt{\\frac{2gh}{3}}": {"task": "math", "answer": "\\sqrt{\\frac{2gh}{3}}"},
    "math: mg\\sin\\theta": {"task": "math", "answer": "mg\\sin\\theta"},
    "math: \\frac{mgL}{2}": {"task": "math", "answer": "\\frac{mgL}{2}"},
    "math: \\frac{\\mu_0 I}{2\\pi r}": {"task": "math", "answer": "\\frac{\\mu_0 I}{2\\pi r}"},
    "math: \\frac{\\mu_0 NI}{L}": {"task": "math", "answer": "\\frac{\\mu_0 NI}{L}"},
    "math: \\frac{V^2}{R}": {"task": "math", "answer": "\\frac{V^2}{R}"},
    "math: I^2R": {"task": "math", "answer": "I^2R"},
    "math: \\frac{1}{2}CV^2": {"task": "math", "answer": "\\frac{1}{2}CV^2"},
    "math: \\frac{1}{2}+\\frac{1}{2}i": {"task": "math", "answer": "\\frac{1}{2}+\\frac{1}{2}i"},
    "math: -\\frac{1}{2}i": {"task": "math", "answer": "-\\frac{1}{2}i"},
    "math: \\frac{i}{2}": {"task": "math", "answer": "\\frac{i}{2}"},
    "math: 1+2i": {"task": "math", "answer": "1+2i"},
    "math: n(n+1)": {"task": "math", "answer": "n(n+1)"},
    "math: (1, 2), (3, 4)": {"task": "math", "answer": "(1, 2), (3, 4)"},
    "math: \\{(1, 2), (3, 4)\\}": {"task": "math", "answer": "\\{(1, 2), (3, 4)\\}"},
    "math: (-\\infty, 1)": {"task": "math", "answer": "(-\\infty, 1)"},
    "math: 2xyz": {"task": "math", "answer": "2xyz"},
    "math: abc+1": {"task": "math", "answer": "abc+1"},
    "math: \\frac{abc}{2}": {"task": "math", "answer": "\\frac{abc}{2}"},
    "math: 2\\pi r": {"task": "math", "answer": "2\\pi r"},
    "math: -\\frac{\\sqrt{2}}{6}": {"task": "math", "answer": "-\\frac{\\sqrt{2}}{6}"},
    "arithmetic: 19": {"task": "arithmetic", "answer": "19"},
    "math: \\frac{\\sqrt{3}}{4}a^2": {"task": "math", "answer": "\\frac{\\sqrt{3}}{4}a^2"},
    "math: \\frac{\\ln 5}{\\ln 11}": {"task": "math", "answer": "\\frac{\\ln 5}{\\ln 11}"},
    "math: \\frac{\\ln 7}{\\ln 21}": {"task": "math", "answer": "\\frac{\\ln 7}{\\ln 21}"},
    "math: \\frac{\\sqrt[3]{4}}{2}": {"task": "math", "answer": "\\frac{\\sqrt[3]{4}}{2}"},
    "math: \\frac{\\sqrt{2}}{2}": {"task": "math", "answer": "\\frac{\\sqrt{2}}{2}"},
    "math: \\frac{3^{n-1}}{2}": {"task": "math", "answer": "\\frac{3^{n-1}}{2}"},
    "math: \\frac{q}{2}": {"task": "math", "answer": "\\frac{q}{2}"},
    "math: \\frac{v}{r}": {"task": "math", "answer": "\\frac{v}{r}"},
    "math: \\frac{mg}{k}": {"task": "math", "answer": "\\frac{mg}{k}"},
    "math: \\frac{(M-m)g}{M+m}": {"task": "math", "answer": "\\frac{(M-m)g}{M+m}"},
    "math: \\frac{Mm}{M+m}": {"task": "math", "answer": "\\frac{Mm}{M+m}"},
    "math: (M+m)g": {"task": "math", "answer": "(M+m)g"},
    "math: (M-m)g": {"task": "math", "answer": "(M-m)g"},
    "math: \\sqrt{\\frac{2gh(M-m)}{M+m}}": {"task": "math", "answer": "\\sqrt{\\frac{2gh(M-m)}{M+m}}"},
    "math: X^2 - x^2": {"task": "math", "answer": "X^2 - x^2"},
    "math: \\frac{A}{a}": {"task": "math", "answer": "\\frac{A}{a}"},
    "math: \\frac{V}{v}": {"task": "math", "answer": "\\frac{V}{v}"},
    "math: \\frac{Rr}{R+r}": {"task": "math", "answer": "\\frac{Rr}{R+r}"},
    "math: \\pi R^2 - \\pi r^2": {"task": "math", "answer": "\\pi R^2 - \\pi r^2"},
    "math: \\pi(R^2 - r^2)": {"task": "math", "answer": "\\pi(R^2 - r^2)"},
    "math: \\frac{4}{3}\\pi (R^3 - r^3)": {"task": "math", "answer": "\\frac{4}{3}\\pi (R^3 - r^3)"},
    "math: \\frac{Nn}{N+n}": {"task": "math", "answer": "\\frac{Nn}{N+n}"},
    "arithmetic: 3": {"task": "arithmetic", "answer": "3"},
    "arithmetic: 1": {"task": "arithmetic", "answer": "1"},
    "arithmetic: -5": {"task": "arithmetic", "answer": "-5"},
    "exact: neither": {"task": "exact", "answer": "neither"},
    "math: \\angle ABC": {"task": "math", "answer": "\\angle ABC"},
    # round 9: the red team's golds
    "math: 1": {"task": "math", "answer": "1"},
    "math: 8": {"task": "math", "answer": "8"},
    "math: 50": {"task": "math", "answer": "50"},
    "math: 144": {"task": "math", "answer": "144"},
    "math: \\frac{3}{2}": {"task": "math", "answer": "\\frac{3}{2}"},
    "math: [0.5, 2]": {"task": "math", "answer": "[0.5, 2]"},
    "math: \\{0.5, 2\\}": {"task": "math", "answer": "\\{0.5, 2\\}"},
    "math: (1.5, -2)": {"task": "math", "answer": "(1.5, -2)"},
    "math: y = 0.5x + 3": {"task": "math", "answer": "y = 0.5x + 3"},
    "math: x = 0.5": {"task": "math", "answer": "x = 0.5"},
    "math: 0.5\\pi": {"task": "math", "answer": "0.5\\pi"},
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
# red team round 9 (code): prompts whose helpers the tests trust, each with its tests carried the way every
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
PROBLEMS |= {
    name: {
        "task": "code",
        "prompt": prompt,
        "answer": FIND_ZERO,
        "tests": code_prompt.tests_with_prompt(code_prompt.prompt_code(prompt), FIND_ZERO_TESTS),
    }
    for name, prompt in HELPER_PROMPTS.items()
}
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
        code_prompt.prompt_code(DECODE_PROMPT),
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


def test_math_and_retrieval_attacks_get_their_stated_reward(tmp_path: Path):
    entries = [e for e in CORPUS if e["tier"] != "code"]
    rows = _score(tmp_path, entries)
    assert _misjudged(entries, rows) == []


def test_code_attacks_get_their_stated_reward(tmp_path: Path):
    try:
        sandbox_mode()
    except SandboxError as err:
        pytest.skip(f"no sandbox here: {err}")
    entries = [e for e in CORPUS if e["tier"] == "code"]
    rows = _score(tmp_path, entries)
    assert _misjudged(entries, rows) == []
    assert all(r["verifier"] == "sandbox" for r in rows)


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
