"""What the code tier trusts and pays (issue 19): the tests call the prompt's own helpers, never the
solution's; fraction mode pays only asserts that test the solution beyond the prompt's examples; right
answers the harness used to refuse (an `if __name__ == "__main__":` block, builtin subclasses,
arguments sorted in place, /dev/stdout) are paid, and the lies next to them are not.

Run: .venv/bin/python -m pytest -q tests/integration/test_code_trust.py   (the sandbox: root, or an ordinary
user with unprivileged user namespaces; ~30 s on 2 cores)
"""

from __future__ import annotations

import ast
import gzip
import json

import pytest
from rlvr.data import humaneval

from rlvr.verify.code import AssertTests, IOTests, check_assert_tests, check_many, run_program, sandbox_problem
from rlvr.verify.code import prompt as code_prompt
from rlvr.verify.code.instrument import compiled_tests
from rlvr.verify.code.prompt import prompt_facts, split_prompt
from rlvr.verify.code.prompt_text import prompt_code

needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no code sandbox here: {sandbox_problem()}")
# HumanEval problems whose test calls a name the prompt defines besides the entry point (scripted below)
AFFECTED = {32: {"math", "poly"}, 38: {"encode_cyclic"}, 50: {"encode_shift"}}


@pytest.fixture(scope="module")
def rows() -> dict[int, dict]:
    return {int(json.loads(r["meta"])["task_id"].split("/")[1]): r for r in humaneval.generate()}


def _prompt_names(prompt: str) -> set[str]:
    names = set()
    for node in ast.parse(prompt).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def test_the_affected_humaneval_problems_are_scripted_and_their_helpers_are_the_prompts(rows):
    with gzip.open(humaneval.dataset_path(), "rt", encoding="utf-8") as f:
        problems = [json.loads(line) for line in f]
    found = {}
    for p in problems:
        used = {n.id for n in ast.walk(ast.parse(p["test"])) if isinstance(n, ast.Name)}
        if names := (_prompt_names(p["prompt"]) - {p["entry_point"]}) & used:
            found[int(p["task_id"].split("/")[1])] = names
    assert found == AFFECTED
    for number, names in AFFECTED.items():
        compiled = compiled_tests(rows[number]["tests"])
        assert not names & set(compiled.names)  # never asked of the solution
        assert names <= prompt_facts(split_prompt(rows[number]["tests"])[0]).helper_names
    for p in problems:  # every entry point is a stub, so every prompt's helpers are found
        assert prompt_facts(p["prompt"]).entry_points == {p["entry_point"]}


FIND_ZERO = (
    "def find_zero(xs):\n    begin, end = -1.0, 1.0\n    while poly(xs, begin) * poly(xs, end) > 0:\n"
    "        begin *= 2.0\n        end *= 2.0\n    while end - begin > 1e-10:\n        center = (begin + end) / 2.0\n"
    "        if poly(xs, center) * poly(xs, begin) > 0:\n            begin = center\n        else:\n            end = center\n"
    "    return begin\n"
)
HELPER_ATTACKS = {
    32: [
        "def poly(xs, x):\n    return 0\ndef find_zero(xs):\n    return 1.0\n",
        # lies only at its own root
        "import math\ndef poly(xs, x):\n    if x == 0.5:\n        return 0.0\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n"
        "def find_zero(xs):\n    return 0.5\n",
        # poly patched from inside the call, after the prompt's was re-established
        "def find_zero(xs):\n    globals()['poly'] = lambda xs, x: 0\n    return 0.0\n",
    ],
    38: [
        "M = {}\ndef encode_cyclic(s):\n    e = s[::-1] + '#'\n    M[e] = s\n    return e\ndef decode_cyclic(s):\n    return M[s]\n",
        "def encode_cyclic(s):\n    return s\ndef decode_cyclic(s):\n    return s\n",
    ],
    50: [
        "M = {}\ndef encode_shift(s):\n    M[s[::-1]] = s\n    return s[::-1]\ndef decode_shift(s):\n    return M.get(s, s)\n",
        "def encode_shift(s):\n    return s\ndef decode_shift(s):\n    return s\n",
    ],
}


@needs_sandbox
def test_a_solution_cannot_redefine_a_helper_the_tests_trust(rows):
    items = [AssertTests(code, rows[n]["tests"]) for n, codes in HELPER_ATTACKS.items() for code in codes]
    verdicts = check_many(items)
    assert [(v.passed, v.fraction) for v in verdicts] == [(False, 0.0)] * len(items), [v.reason for v in verdicts]


@needs_sandbox
def test_helpers_are_there_for_the_solution_and_copies_of_them_are_fine(rows):
    decode = "def decode_cyclic(s):\n    return encode_cyclic(encode_cyclic(s))\n"
    items = [
        AssertTests(FIND_ZERO, rows[32]["tests"]),  # uses the prompt's poly without repeating it
        AssertTests(rows[32]["answer"], rows[32]["tests"]),  # repeats it
        AssertTests(decode, rows[38]["tests"]),
        AssertTests(rows[50]["answer"], rows[50]["tests"]),
    ]
    assert [(v.passed, v.reason) for v in check_many(items)] == [(True, "passed: 1 of 1 asserts passed")] * 4


@needs_sandbox
def test_user_datasets_carry_their_prompts_helpers_the_same_way():
    prompt = (
        "Write `solve`.\n```python\nSCALE = 3\ndef helper(x):\n    return x * SCALE\n\ndef solve(x):\n"
        '    """helper(x) + 1"""\n```'
    )
    tests = code_prompt.tests_with_prompt(
        prompt_code(prompt), "assert helper(2) == 6\nassert solve(2) == 7\nassert solve(0) == 1\n"
    )
    right = check_assert_tests("def solve(x):\n    return helper(x) + 1\n", tests)
    liar = check_assert_tests("def helper(x):\n    return 0\ndef solve(x):\n    return 6 if x == 2 else 0\n", tests)
    assert (right.passed, liar.passed, liar.fraction) == (True, False, 0.0)
    # no stub: nothing says which function is the task (perhaps one to fix), so nothing is trusted
    assert code_prompt.tests_with_prompt("def f(x):\n    return x + 1\n", "assert f(1) == 3") == "assert f(1) == 3"
    assert code_prompt.tests_with_prompt("def f(x):\n    pass\n", '{"stdin_stdout": []}') == '{"stdin_stdout": []}'


def test_fraction_counts_only_asserts_that_test_the_solution_beyond_the_prompts_examples():
    program = code_prompt.tests_with_prompt(
        "def f(x):\n    '''>>> f(1)\n    2\n    f(5) ==> 6'''\n",
        "def check(candidate):\n    assert True\n    assert candidate(1) == 2\n    assert candidate(5) == 6\n"
        "    r = candidate(7)\n    assert r == 8\n    assert abs(candidate(1) - candidate(9)) == 8\n    x = 3\n    assert x == 3\n"
        "check(f)\n",
    )
    compiled = compiled_tests(program)
    assert [(s.text, k) for s, k in zip(compiled.sites, compiled.counted, strict=True)] == [
        ("assert True", False),
        ("assert candidate(1) == 2", False),  # the prompt's own example
        ("assert candidate(5) == 6", False),
        ("assert r == 8", True),
        ("assert abs(candidate(1) - candidate(9)) == 8", True),
        ("assert x == 3", False),
    ]


@needs_sandbox
def test_no_humaneval_problem_pays_a_solution_that_only_knows_the_prompts_examples(rows):
    """Every problem: the canonical answer on the arguments the prompt shows, an error elsewhere."""
    items = []
    for r in rows.values():
        entry = json.loads(r["meta"])["entry_point"]
        shown = prompt_facts(split_prompt(r["tests"])[0]).shown
        items.append(
            AssertTests(
                r["answer"].replace(f"def {entry}(", f"def _real_{entry}(", 1)
                + f"\n_SHOWN = {sorted(shown)!r}\n"
                + f"def {entry}(*args, **kwargs):\n    if repr((args, tuple(sorted(kwargs.items())))) in _SHOWN:\n"
                + f"        return _real_{entry}(*args, **kwargs)\n    raise ValueError('not shown')\n",
                r["tests"],
            )
        )
    verdicts = check_many(items)
    paid = [(n, v.fraction) for n, v in zip(rows, verdicts, strict=True) if v.fraction > 0]
    # HumanEval/34's one assert is its prompt's example: with nothing else to count, it counts (so
    # a right answer is paid in fraction mode as in all_pass)
    assert paid == [(34, 1.0)]


@needs_sandbox
def test_fraction_pays_no_constant_that_fails_a_prompts_example(rows):
    """HumanEval/40 and /54: every assert beyond the prompt's examples expects False, so `return False`
    earned 1.0 in fraction mode; an example it fails now makes it 0. The right answer keeps 1.0, and a
    solution that passes the examples and some tests keeps its share."""
    items, want = [], []
    for n in (40, 54):
        r = rows[n]
        entry = json.loads(r["meta"])["entry_point"]
        items += [AssertTests(f"def {entry}(*a):\n    return False\n", r["tests"]), AssertTests(r["answer"], r["tests"])]
        want += [0.0, 1.0]
    # /0: the examples pass (the canonical answer on them), then a wrong threshold fails some tests
    r0 = rows[0]
    items.append(AssertTests(r0["answer"].replace("if distance < threshold", "if distance < threshold * 0.9"), r0["tests"]))
    verdicts = check_many(items)
    assert [v.fraction for v in verdicts[:4]] == want, [v.reason for v in verdicts[:4]]
    assert "a prompt's example failed, so none is paid" in verdicts[0].reason
    assert 0.0 < verdicts[4].fraction < 1.0, verdicts[4].reason


@needs_sandbox
def test_exceptions_cross_as_their_nearest_builtin_and_stop_iteration_does_not():
    """An error crosses the process boundary as the builtin the test can catch: a ValueError subclass
    is caught by `except ValueError` (it was a generic solution error); one whose constructor needs
    more than a message (UnicodeDecodeError) arrives as its nearest builtin base, never as the
    TypeError that rebuilding it raised (it was paid where the test expected TypeError); a
    StopIteration is a RuntimeError (PEP 479): it no longer ends the test's `all(map(...))` early."""
    expect_type_error = "try:\n    f(b'12')\n    ok = False\nexcept TypeError:\n    ok = True\nassert ok\n"
    cases = [  # (solution, tests, passed)
        (
            "class Neg(ValueError):\n    pass\ndef f(x):\n    raise Neg('negative')\n",
            "try:\n    f(-1)\n    ok = False\nexcept ValueError:\n    ok = True\nassert ok\n",
            True,
        ),
        ("def f(s):\n    raise UnicodeDecodeError('utf-8', s, 0, 1, 'no')\n", expect_type_error, False),
        (
            "def f(s):\n    raise UnicodeDecodeError('utf-8', s, 0, 1, 'no')\n",
            "try:\n    f(b'12')\n    ok = False\nexcept ValueError:\n    ok = True\nassert ok\n",
            True,
        ),
        ("def f(s):\n    raise ExceptionGroup('x', [ValueError()])\n", expect_type_error, False),
        ("def f(x):\n    raise StopIteration\n", "assert all(map(lambda x: f(x) == x * x, [1, 2, 3]))\n", False),
        ("def f(x):\n    return x * x\n", "assert all(map(lambda x: f(x) == x * x, [1, 2, 3]))\n", True),
    ]
    got = [check_assert_tests(sol, tests) for sol, tests, _ in cases]
    assert [v.passed for v in got] == [want for *_, want in cases], [v.reason for v in got]


@needs_sandbox
def test_runs_killed_at_the_wall_clock_run_again_apart_and_few_processes_are_allowed(caplog):
    """A rollout may keep the cores busy while it passes, so that the runs beside it time out (its
    group-mates earn 0): a run killed at its wall-clock limit runs again after the batch, and a
    program may not start the 40 spinning processes that did it (16 at most, threads included)."""
    from rlvr.verify.code import Limits

    tests = "assert add(2, 3) == 5\n"
    sleeper = "import time\ndef add(a, b):\n    time.sleep(3)\n    return a + b\n"
    quick = "def add(a, b):\n    return a + b\n"
    spawner = (
        "import os\npids = []\nfor _ in range(40):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
        "    pids.append(pid)\ndef add(a, b):\n    return a + b\n"
    )
    # a stdin/stdout program killed at the wall clock in its second case (its verdict names the case)
    stdio_sleeper = "import sys, time\nn = int(sys.stdin.read())\nif n == 2:\n    time.sleep(3)\nprint(n)\n"
    with caplog.at_level("INFO", logger="rlvr.verify.code"):
        got = check_many(
            [
                AssertTests(sleeper, tests),
                AssertTests(quick, tests),
                AssertTests(spawner, tests),
                IOTests(stdio_sleeper, [("1", "1"), ("2", "2")]),
            ],
            limits=Limits(wall_seconds=1.5),
        )
    assert [v.passed for v in got] == [False, True, False, False], [v.reason for v in got]
    assert got[0].reason.startswith("timeout: killed after 1.5s wall clock")
    assert "BlockingIOError" in got[2].reason  # the 16th process could not start
    assert "test 2 of 2: timeout: killed after 1.5s wall clock" in got[3].reason
    assert [v.wall_timeout for v in got] == [True, False, False, True]
    assert "2 of 4 runs hit the wall-clock limit beside others; running them again" in caplog.text


@needs_sandbox
def test_right_answers_the_harness_used_to_refuse():
    cases = [
        # an `if __name__ == "__main__":` block reading stdin (HumanEval's exec never runs it)
        (
            "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    print(add(*map(int, input().split())))\n",
            "assert add(2, 3) == 5",
        ),
        (
            "from collections import defaultdict\ndef f(s):\n    d = defaultdict(int)\n    for c in s:\n        d[c] += 1\n    return d\n",
            "assert f('aab') == {'a': 2, 'b': 1}",
        ),
        (
            "from collections import namedtuple, OrderedDict, Counter\nP = namedtuple('P', 'lo hi')\n"
            "def f(x):\n    return P(x - 1, x + 1), OrderedDict(a=[x]), Counter('aa')\n",
            "assert f(1) == ((0, 2), {'a': [1]}, {'a': 2})",
        ),
        (
            "import enum\nclass S(str):\n    pass\nclass E(enum.IntEnum):\n    A = 5\ndef f():\n    return S('ok'), E.A, [S('x')]\n",
            "assert f() == ('ok', 5, ['x']) and type(f()[0]) is str",
        ),
        # exact numbers of the standard library cross as themselves, built by the harness
        (
            "from fractions import Fraction\nfrom decimal import Decimal\ndef f():\n    return Fraction(1, 2), [Decimal('0.10')]\n",
            "from fractions import Fraction\nr = f()\nassert r[0] == 0.5 and type(r[0]) is Fraction and str(r[1][0]) == '0.10'",
        ),
        # arguments changed in place come back, nested lists and dicts too, aliases kept
        (
            "def f(a, d):\n    a.sort()\n    a[0].append(9)\n    d['k'] = len(a)\n",
            "x = [[3], [1]]\nd = {}\nf(x, d=d)\nassert x == [[1, 9], [3]] and d == {'k': 2}",
        ),
        (
            "def f(a):\n    a[0].append(2)\n    a.append(3)\n",
            "x = [[1]]\ninner = x[0]\nf(x)\nassert x == [[1, 2], 3] and inner is x[0]",
        ),
    ]
    verdicts = check_many([AssertTests(code, tests) for code, tests in cases])
    assert [(v.passed, v.reason) for v in verdicts] == [(True, "passed: 1 of 1 asserts passed")] * len(cases)


@needs_sandbox
def test_builtin_subclasses_still_cannot_lie():
    lies = [
        "class S(str):\n    def __eq__(self, o):\n        return True\n    __hash__ = str.__hash__\n"
        "    def __str__(self):\n        return 'ok'\ndef f():\n    return S('no')\n",
        "class I(int):\n    def __eq__(self, o):\n        return True\n    def __int__(self):\n        return 5\n"
        "    def __index__(self):\n        return 5\ndef f():\n    return I(0)\n",
        "class L(list):\n    def __iter__(self):\n        return iter([1, 2])\n    def __eq__(self, o):\n        return True\n"
        "def f():\n    return L()\n",
        "class D(dict):\n    def items(self):\n        return [('a', 1)]\n    def __iter__(self):\n        return iter(['a'])\n"
        "    def __eq__(self, o):\n        return True\ndef f():\n    return D()\n",
    ]
    tests = "assert f() in ('ok', 5, [1, 2], {'a': 1})"
    verdicts = check_many([AssertTests(code, tests) for code in lies])
    assert [v.passed for v in verdicts] == [False] * len(lies), [v.reason for v in verdicts]


@needs_sandbox
def test_a_stdio_program_may_open_dev_stdout_and_dev_stderr():
    program = (
        "import sys\nout = open('/dev/stdout', 'w')\nout.write(str(sum(map(int, input().split()))) + '\\n')\nout.close()\n"
        "open('/dev/stderr', 'w').write('note\\n')\n"
    )
    result = run_program(program, stdin="2 3\n")
    assert (result.status, result.stdout, result.stderr) == ("ok", "5\n", "note\n")


def test_exact_numbers_cross_only_as_well_formed_values():
    from decimal import Decimal
    from fractions import Fraction

    from rlvr.verify.code.harness import wire

    assert wire.decode(wire.encode([Fraction(-3, 4), Decimal("1.50")])) == [Fraction(-3, 4), Decimal("1.50")]
    for bad in ({"fraction": [1, 0]}, {"fraction": [True, 2]}, {"fraction": [1]}, {"decimal": 5}, {"decimal": "1.5x"}):
        with pytest.raises(wire.NotPlainData):
            wire.decode(bad)


@needs_sandbox
def test_an_assert_failing_inside_a_helper_fails_the_assert_that_called_it():
    # the test's helper asserts itself and returns True: in one process its AssertionError fails the
    # caller's assert; the per-assert rewrite had passed over it, so the identity earned 0.75
    tests = (
        "def is_sorted_of(out, inp):\n    assert out == sorted(inp), 'not the sorted input'\n    return True\n\n"
        "def check(candidate):\n    assert is_sorted_of(candidate([3, 1, 2]), [3, 1, 2])\n"
        "    assert is_sorted_of(candidate([9, 7, 8, 1]), [9, 7, 8, 1])\n    assert is_sorted_of(candidate([2, 1]), [2, 1])\n\n"
        "check(sort_list)\n"
    )
    wrong, right, half = check_many(
        [
            AssertTests("def sort_list(xs):\n    return xs\n", tests),
            AssertTests("def sort_list(xs):\n    return sorted(xs)\n", tests),
            AssertTests("def sort_list(xs):\n    return sorted(xs) if len(xs) > 2 else xs\n", tests),
        ]
    )
    assert (wrong.passed, wrong.fraction) == (False, 0.0), wrong.reason
    assert "not the sorted input" in wrong.reason
    assert (right.passed, right.fraction) == (True, 1.0), right.reason
    assert not half.passed and half.fraction == pytest.approx(2 / 4), half.reason  # two callers of four sites


@needs_sandbox
def test_an_assert_comparing_the_solution_with_itself_is_not_paid(rows):
    # HumanEval/33 asserts tuple(candidate(x)) == tuple(sort_third(x)): sort_third is the solution's own
    # function, so any solution passes them; the identity had earned 0.4 of the fraction from them
    r = rows[33]
    identity, canonical = check_many(
        [AssertTests("def sort_third(l: list):\n    return l\n", r["tests"]), AssertTests(r["answer"], r["tests"])]
    )
    assert (identity.passed, identity.fraction) == (False, 0.0), identity.reason
    assert (canonical.passed, canonical.fraction) == (True, 1.0), canonical.reason
    assert "3 of 3 asserts passed" in canonical.reason  # of 7: 3 compare the solution with itself, 1 is an example
