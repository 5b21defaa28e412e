"""The stdin/stdout code task (data/stdio.py) and the tests column parser (rlvr.verify.code.make_check).

Every reference program passes every hand-written case in the sandbox; a wrong program gets the
fraction of cases it passes; make_check picks the kind and rejects malformed tests by name.
Run: .venv/bin/python -m pytest -q tests/integration/test_stdio.py   (the sandbox tests need root)
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from rlvr.data import stdio

from rlvr.schema import PROBLEMS
from rlvr.verify.code import (
    AssertTests,
    IOTests,
    check_many,
    extract_code,
    io_tests_json,
    make_check,
    parse_io_tests,
    sandbox_problem,
)

needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no code sandbox here: {sandbox_problem()}")


def test_rows_fit_the_problems_schema():
    rows = stdio.generate()
    table = pa.Table.from_pylist(rows, schema=PROBLEMS)
    assert table.num_rows == stdio.N_PROBLEMS >= 20
    assert [r["prompt_id"] for r in rows[:2]] == ["stdio-000", "stdio-001"]
    assert len({r["prompt_id"] for r in rows}) == len({r["prompt"] for r in rows}) == stdio.N_PROBLEMS
    first = rows[0]
    assert (first["task"], first["split"], first["sources"]) == ("code", "test", None)
    assert json.loads(first["meta"]) == {"kind": "stdin_stdout"}
    # the instruction is the task's default template, the row holds statement + example
    assert "one ```python code block" in stdio.TEMPLATE.format(prompt=first["prompt"])
    assert "one ```python code block" not in first["prompt"]
    assert "Example input:\n```\n3\n1 2 3\n```" in first["prompt"]
    assert extract_code(first["prompt"]) is not None  # the example fences parse; a response's block wins
    for row in rows:
        cases = parse_io_tests(row["tests"])
        assert 3 <= len(cases) <= 5, row["prompt_id"]
        assert make_check(row["answer"], row["tests"]) == IOTests(row["answer"], cases, frozenset({0}))  # the example shown
        assert f"Example input:\n```\n{cases[0][0]}" in row["prompt"]


def test_train_test_split_is_deterministic_and_disjoint():
    a = stdio.generate(seed=1, n_train=15, n_test=5)
    assert a == stdio.generate(seed=1, n_train=15, n_test=5)
    splits = [r["split"] for r in a]
    assert (splits.count("train"), splits.count("test")) == (15, 5)
    assert [r["split"] for r in stdio.generate(seed=2, n_train=15, n_test=5)] != splits
    assert len(stdio.generate(n_train=3, n_test=2)) == 5
    with pytest.raises(ValueError, match="n_train"):
        stdio.generate(n_train=20, n_test=1)


@needs_sandbox
def test_every_reference_program_passes_all_its_cases():
    rows = stdio.generate()
    verdicts = check_many([make_check(r["answer"], r["tests"]) for r in rows])
    failed = [(r["prompt_id"], v.reason) for r, v in zip(rows, verdicts, strict=True) if not v.passed]
    assert failed == []
    assert {v.fraction for v in verdicts} == {1.0}


@needs_sandbox
def test_wrong_programs_get_the_fraction_of_the_unshown_cases_they_pass():
    rows = {r["prompt_id"]: r for r in stdio.generate()}
    fizz, gcd = rows["stdio-003"], rows["stdio-004"]
    # fizzbuzz that forgets FizzBuzz: right for n = 5 and n = 1, wrong at 15
    no_fizzbuzz = fizz["answer"].replace("'FizzBuzz' if i % 15 == 0 else ", "")
    # gcd as min(a, b): right only for "100 10"
    wrong_gcd = "a, b = map(int, input().split())\nprint(min(a, b))\n"
    verdicts = check_many(
        [
            make_check(no_fizzbuzz, fizz["tests"]),
            make_check(wrong_gcd, gcd["tests"]),
            make_check("print(", gcd["tests"]),
        ]
    )
    # the prompt shows each problem's first case: it gates the fraction and never counts in it
    assert [(v.passed, v.fraction) for v in verdicts] == [
        (False, 1 / 2),
        (False, 0.0),
        (False, 0.0),
    ]
    assert verdicts[0].reason.startswith("failed: 2 of 3 tests passed; first failure test 3 of 3: expected '1")
    assert verdicts[1].reason == (
        "failed: 1 of 4 tests passed; first failure test 1 of 4: expected '6', got '12'; "
        "the prompt's example (test 1) failed, so none counts"
    )
    assert verdicts[2].reason.startswith("failed: 0 of 4 tests passed; first failure test 1 of 4: error: exit 1")


def test_make_check_picks_the_kind():
    io = make_check("print(input())", '  {"stdin_stdout": [{"stdin": "a\\n", "stdout": "a\\n"}]}')
    assert io == IOTests("print(input())", (("a\n", "a\n"),))
    assert make_check("x = 1", "assert x == 1") == AssertTests("x = 1", "assert x == 1")
    # a Python test program that happens to start with a brace is still a test program
    assert isinstance(make_check("x = 1", "{1: 2}\nassert x == 1"), AssertTests)
    cases = [("1 2\n", "3\n"), ("", "")]
    assert parse_io_tests(io_tests_json(cases)) == tuple(cases)


@pytest.mark.parametrize(
    ("tests", "message"),
    [
        (
            '{"stdin_stdout": [{"stdin": "1", "stdout": "2"}',
            "stdin/stdout tests are not valid JSON",
        ),
        (
            '{"inputs": ["1"], "outputs": ["2"]}',
            "the key 'stdin_stdout' \\(and optionally 'shown'\\), got \\['inputs', 'outputs'\\]",
        ),
        (
            '{"stdin_stdout": [], "extra": 1}',
            "the key 'stdin_stdout' \\(and optionally 'shown'\\), got \\['extra', 'stdin_stdout'\\]",
        ),
        ('{"stdin_stdout": []}', "'stdin_stdout' must be a non-empty list of cases"),
        (
            '{"stdin_stdout": {"stdin": "1", "stdout": "2"}}',
            "'stdin_stdout' must be a non-empty list",
        ),
        (
            '{"stdin_stdout": [{"stdin": "1"}]}',
            "case 0 must be an object with string 'stdin' and 'stdout'",
        ),
        (
            '{"stdin_stdout": [{"stdin": "1", "stdout": 2}]}',
            'case 0 .* got {"stdin": "1", "stdout": 2}',
        ),
        (
            '{"stdin_stdout": [{"stdin": "", "stdout": ""}, ["1", "2"]]}',
            "case 1 must be an object",
        ),
        (
            "def check(:\n    pass",
            "the test program is not valid Python: .* at tests.py line 1",
        ),
        (None, "the problem has no tests"),
    ],
)
def test_make_check_rejects_malformed_tests_with_the_reason(tests, message):
    with pytest.raises(ValueError, match=message):
        make_check("print(1)", tests)
