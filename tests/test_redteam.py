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
    # round 5: the red team's golds (problem named by task and gold)
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
# the shipped HumanEval problems by prompt id ("humaneval-032"): their tests as the code tier gets them
PROBLEMS |= {r["prompt_id"]: {k: r[k] for k in ("task", "answer", "tests")} for r in humaneval.generate()}


def _score(tmp_path: Path, entries: list[dict]) -> list[dict]:
    """Each entry against its own copy of its problem (so groups do not mix), in corpus order."""
    problems = [{"prompt_id": f"rt{i:03d}", "prompt": e["attack"], **PROBLEMS[e["problem"]]} for i, e in enumerate(entries)]
    responses = [(f"rt{i:03d}", e["response"]) for i, e in enumerate(entries)]
    table, _ = score_with_stats(*write_inputs(tmp_path, problems, responses), VerifySection(code_timeout_s=5.0))
    return sorted(table.to_pylist(), key=lambda r: r["prompt_id"])


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
