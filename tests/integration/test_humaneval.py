"""HumanEval rows and the sandbox on them: all 164 reference solutions pass every assert (fraction
1.0), wrong ones fail with a reason and the fraction of asserts they passed.

Run: .venv/bin/python -m pytest -q -s tests/integration/test_humaneval.py   (~10 s on 2 cores; prints programs/s)
"""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pytest
from rlvr.data import humaneval

from rlvr.schema import PROBLEMS
from rlvr.verify.code import AssertTests, Limits, check_many, extract_code, sandbox_problem

needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no code sandbox here: {sandbox_problem()}")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return humaneval.generate()


def test_rows_fit_the_problems_schema(rows):
    table = pa.Table.from_pylist(rows, schema=PROBLEMS)
    assert table.num_rows == 164
    assert [r["prompt_id"] for r in rows[:2]] == ["humaneval-000", "humaneval-001"]
    assert len({r["prompt_id"] for r in rows}) == 164
    first = rows[0]
    assert (first["task"], first["split"], first["sources"]) == ("code", "test", None)
    assert json.loads(first["meta"]) == {
        "task_id": "HumanEval/0",
        "entry_point": "has_close_elements",
    }
    assert first["tests"].rstrip().endswith("check(has_close_elements)")
    assert "def has_close_elements" in first["prompt"] and "```python" in first["prompt"]
    assert extract_code(first["prompt"]).startswith("from typing import List")


def test_train_test_split_is_deterministic_and_disjoint():
    a = humaneval.generate(seed=1, n_train=100, n_test=64)
    b = humaneval.generate(seed=1, n_train=100, n_test=64)
    assert a == b
    splits = [r["split"] for r in a]
    assert (splits.count("train"), splits.count("test")) == (100, 64)
    assert [r["split"] for r in humaneval.generate(seed=2, n_train=100, n_test=64)] != splits
    with pytest.raises(ValueError, match="n_train"):
        humaneval.generate(n_train=100, n_test=100)


@needs_sandbox
def test_all_canonical_solutions_pass_in_the_sandbox(rows):
    start = time.monotonic()
    verdicts = check_many([AssertTests(r["answer"], r["tests"]) for r in rows])
    elapsed = time.monotonic() - start
    failed = [(r["prompt_id"], v.reason) for r, v in zip(rows, verdicts, strict=True) if not v.passed or v.fraction != 1.0]
    assert failed == []
    assert all(v.reason.startswith("passed: ") and "asserts passed" in v.reason for v in verdicts)
    print(f"\nHumanEval: 164 reference solutions in {elapsed:.1f}s = {164 / elapsed:.1f} programs/s on {os.cpu_count()} cores")


@needs_sandbox
def test_wrong_solutions_fail_with_a_reason(rows):
    # HumanEval/53: add(x, y)
    add = next(r for r in rows if json.loads(r["meta"])["entry_point"] == "add")
    # signature and docstring only
    stub = rows[0]["prompt"].split("```python\n")[1].rstrip("`")
    items = [
        AssertTests(add["answer"].replace("return x + y", "return x - y"), add["tests"]),
        AssertTests(stub + "    return None\n", rows[0]["tests"]),
        AssertTests(stub + "    while True:\n        pass\n", rows[0]["tests"]),
        AssertTests("def something_else():\n    return 1\n", rows[0]["tests"]),
    ]
    verdicts = check_many(items, limits=Limits(wall_seconds=3.0, cpu_seconds=1))
    assert [v.passed for v in verdicts] == [False] * 4
    # add(x, y) returning x - y: only add(1, 0) == 1 holds; add(2, 3) and add(5, 7) are the prompt's
    # own examples and the fraction leaves them out: 1 of the 4 other assert statements passes, but
    # the examples fail, so the fraction pays nothing
    assert verdicts[0].fraction == 0.0
    assert verdicts[0].reason == (
        "failed: AssertionError at tests.py line 20: assert candidate(0, 1) == 1; 1 of 4 asserts passed "
        "(2 not counted: the prompt's own examples, or no call of the solution); a prompt's example failed, so none is paid"
    )
    assert verdicts[1].reason.startswith("failed: AssertionError at tests.py line")
    assert verdicts[2].reason.startswith("timeout") and verdicts[2].reason.endswith("; 0 of 7 asserts passed")
    assert [v.fraction for v in verdicts[1:]] == [0.0, 0.0, 0.0]
    assert verdicts[3].reason.startswith("failed: NameError: name 'has_close_elements' is not defined")
