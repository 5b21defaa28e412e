"""The code tier of verification: task = 'code' rows run their fenced code against the problem's
tests in the bubblewrap sandbox, inside the same verify pass, with readable reasons."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from rlvr.config import VerifySection
from rlvr.verify import score_with_stats
from rlvr.verify.code import sandbox_problem
from tests.helpers.verify_inputs import write_inputs

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no code sandbox here: {sandbox_problem()}")

TESTS = "def check(f):\n    assert f(2, 3) == 5\n    assert f(-1, 1) == 0\ncheck(add)\n"
RESPONSES = [
    "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```",  # passes
    "```python\ndef add(a, b):\n    return a - b\n```",  # fails an assert
    "I would add them.",  # no code
    "```python\ndef add(a, b):\n    while True:\n        pass\n```",  # never ends
    "```python\nopen('RUN_DIR/pwned', 'w').write('x')\nopen('RUN_DIR/problems.parquet', 'wb').write(b'')\n"
    "def add(a, b):\n    return a + b\n```",  # tries to write into the run store (RUN_DIR: the test's)
]


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode() + (p.read_bytes() if p.is_file() else b""))
    return h.hexdigest()


def test_code_rows_are_run_in_the_sandbox(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    responses = [("add", t.replace("RUN_DIR", str(run))) for t in RESPONSES] + [("num", "<answer>2</answer>")]
    rollouts, problems = write_inputs(
        run,
        [
            {
                "prompt_id": "add",
                "task": "code",
                "split": "test",
                "prompt": "write add",
                "answer": "def add(a, b): ...",
                "tests": TESTS,
            },
            {"prompt_id": "num", "task": "arithmetic", "split": "test", "prompt": "1+1", "answer": "2"},
        ],
        responses,
    )
    before = _digest(run)
    table, stats = score_with_stats(rollouts, problems, VerifySection(code_timeout_s=3.0), hide=[run])
    out = {(r["prompt_id"], r["sample_idx"]): r for r in table.to_pylist()}
    code = [out[("add", k)] for k in range(len(RESPONSES))]
    assert [r["correct"] for r in code] == [True, False, False, False, False]
    assert [r["reward"] for r in code] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert {r["verifier"] for r in code} == {"sandbox"} and stats["code"] == 5
    assert code[0]["reason"] == "correct: all tests passed (sandbox)"
    assert "assert f(2, 3) == 5" in code[1]["reason"]
    assert code[2]["reason"].startswith("no_code:")
    assert code[3]["reason"].startswith("timeout:")
    assert not code[4]["correct"] and "FileNotFoundError" in code[4]["reason"], code[4]["reason"]
    assert _digest(run) == before and not (run / "pwned").exists()  # the run store is hidden and unchanged
    assert out[("num", 0)]["verifier"] == "sql_numeric" and out[("num", 0)]["correct"]  # other tasks unaffected
    assert code[0]["advantage"] > 0 > code[1]["advantage"]  # the group baseline covers code rows too


def _score_code(tmp_path: Path, tests: str, responses: list[str], cfg: VerifySection) -> list[dict]:
    problem = {"prompt_id": "p", "task": "code", "answer": "", "tests": tests}
    table, _ = score_with_stats(*write_inputs(tmp_path, [problem], [("p", text) for text in responses]), cfg)
    return sorted(table.to_pylist(), key=lambda r: r["sample_idx"])


def test_fraction_passed_is_the_code_score_when_asked(tmp_path: Path) -> None:
    """A solution passing 1 of TESTS' 2 asserts scores 0.5 under code_reward = 'fraction', 0 under all_pass."""
    half = "```python\ndef add(a, b):\n    return 5 if (a, b) == (2, 3) else -1\n```"  # passes the first assert only
    responses = [RESPONSES[0], half, RESPONSES[2]]
    all_pass = _score_code(tmp_path, TESTS, responses, VerifySection())
    assert [r["reward_correct"] for r in all_pass] == [1.0, 0.0, 0.0]
    fraction = _score_code(tmp_path, TESTS, responses, VerifySection(code_reward="fraction"))
    assert [r["reward_correct"] for r in fraction] == [1.0, 0.5, 0.0]
    assert [r["correct"] for r in fraction] == [True, False, False]  # correct still means every test passed
    assert "1 of 2 asserts passed" in fraction[1]["reason"], fraction[1]["reason"]


def test_stdin_stdout_problems(tmp_path: Path) -> None:
    from rlvr.verify.code import io_tests_json

    tests = io_tests_json([("1 2\n", "3\n"), ("5 5\n", "10\n"), ("0 0\n", "0\n")])
    right = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    wrong = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"  # right for 0 0 only
    rows = _score_code(tmp_path, tests, [right, wrong], VerifySection(code_reward="fraction"))
    assert [r["correct"] for r in rows] == [True, False] and rows[0]["reward"] == 1.0
    assert rows[1]["reward_correct"] == pytest.approx(1 / 3), rows[1]["reason"]
    assert "expected '3', got '2'" in rows[1]["reason"], rows[1]["reason"]


def test_malformed_tests_name_the_problem(tmp_path: Path) -> None:
    from rlvr.verify import VerifyError

    with pytest.raises(VerifyError, match=r"code problem 'p': bad `tests`"):
        _score_code(tmp_path, '{"stdin_stdout": []}', [RESPONSES[0]], VerifySection())


SOLUTION = "```python\ndef add(a, b):\n    return a + b\n```"
USAGE = "Example usage:\n```python\nassert add(2, 2) == 5  # the response's own example, wrong\nprint(add(1, 2))\n```"


@pytest.mark.parametrize(
    ("response", "entry_point", "tests", "runs"),
    [
        (SOLUTION + "\n" + USAGE, "add", None, "def add"),
        (SOLUTION + "\n" + USAGE, None, TESTS, "def add"),  # no dataset field: a name the tests use
        (USAGE + "\n" + SOLUTION, "add", None, "def add"),
        (SOLUTION + "\n```python\ndef add(a, b):\n    return b + a\n```", "add", None, "return b + a"),  # the last definition
        (USAGE, "add", None, "assert add(2, 2) == 5"),  # nothing defines it: the last block, as before
        ("```text\nnot code\n```\n" + SOLUTION, "add", None, "def add"),
        ("```js\nfunction add() {}\n```", "add", None, "function add"),  # no python block: the last fenced one
        ("```python\nclass add:\n    pass\n```\n" + USAGE, "add", None, "class add"),
        ("```python\n    def add(a, b): pass\n```\n" + USAGE, "add", None, "def add(a, b): pass"),  # dedented whole
        ("```python\nif True:\n    def add(a, b): pass\n```\n" + USAGE, "add", None, "assert add"),  # not top level
    ],
    ids=[
        "usage-after",
        "usage-after-from-tests",
        "usage-before",
        "last-definition",
        "no-definition",
        "other-language-block",
        "no-python-block",
        "class",
        "indented-block",
        "nested-definition",
    ],
)
def test_the_block_that_defines_the_entry_point_runs(response: str, entry_point, tests, runs: str) -> None:
    from rlvr.verify.code import extract_code

    assert runs in extract_code(response, entry_point=entry_point, tests=tests)


def test_an_example_usage_block_after_a_right_solution_is_not_what_runs(tmp_path: Path) -> None:
    """A right solution followed by an example block with a wrong assert of its own: the block that
    defines the entry point runs, with the entry point from the dataset's field or the tests."""
    problems = [
        {"prompt_id": "meta", "task": "code", "answer": "", "tests": TESTS, "meta": '{"entry_point": "add"}'},
        {"prompt_id": "bare", "task": "code", "answer": "", "tests": TESTS},
    ]
    text = SOLUTION + "\n" + USAGE
    table, _ = score_with_stats(*write_inputs(tmp_path, problems, [("meta", text), ("bare", text)]), VerifySection())
    assert {r["prompt_id"]: r["correct"] for r in table.to_pylist()} == {"meta": True, "bare": True}


def test_an_ordered_dict_crosses_the_sandbox_with_its_order(tmp_path: Path) -> None:
    tests = (
        "from collections import OrderedDict\nassert f() == OrderedDict([('b', 1), ('a', 2)])\nassert f() == {'a': 2, 'b': 1}\n"
    )
    right = "```python\nfrom collections import OrderedDict\ndef f():\n    return OrderedDict([('b', 1), ('a', 2)])\n```"
    wrong = "```python\nfrom collections import OrderedDict\ndef f():\n    return OrderedDict([('a', 2), ('b', 1)])\n```"
    rows = _score_code(tmp_path, tests, [right, wrong], VerifySection())
    assert [r["correct"] for r in rows] == [True, False], [r["reason"] for r in rows]


@pytest.mark.parametrize(
    ("program", "fraction"),
    [
        ("print(int(input()) * 2)", 1.0),  # right
        ("x = int(input())\nprint(2 if x == 1 else x * 2 if x == 2 else 0)", 0.5),  # the example and one other
        ("print(2)", 0.0),  # echoes the prompt's example output: the example pays nothing
        ("x = int(input())\nprint(x * 2 if x > 1 else 0)", 0.0),  # fails the shown example: none counts
    ],
    ids=["right", "example-and-one", "echoes-the-example", "fails-the-example"],
)
def test_a_shown_stdio_example_gates_the_fraction_and_never_counts(tmp_path: Path, program: str, fraction: float) -> None:
    from rlvr.verify.code import io_tests_json

    tests = io_tests_json([("1\n", "2\n"), ("2\n", "4\n"), ("3\n", "6\n")], shown=[0])  # the prompt shows 1 -> 2
    (row,) = _score_code(tmp_path, tests, [f"```python\n{program}\n```"], VerifySection(code_reward="fraction"))
    assert row["reward_correct"] == pytest.approx(fraction), row["reason"]
    if program == "print(2)":
        assert "the prompt's example" not in row["reason"] and "1 of 3 tests passed" in row["reason"]
    if "x > 1" in program:
        assert "the prompt's example (test 1) failed, so none counts" in row["reason"], row["reason"]


@pytest.mark.parametrize(
    ("tests", "error"),
    [
        ('{"stdin_stdout": [{"stdin": "1", "stdout": "2"}], "shown": [1]}', "'shown' must list indices of cases (0 to 0)"),
        ('{"stdin_stdout": [{"stdin": "1", "stdout": "2"}], "shown": "0"}', "'shown' must list indices"),
        ('{"stdin_stdout": [{"stdin": "1", "stdout": "2"}], "other": 1}', "(and optionally 'shown')"),
    ],
    ids=["index-out-of-range", "not-a-list", "unknown-key"],
)
def test_malformed_shown_cases_name_the_field(tests: str, error: str) -> None:
    from rlvr.verify.code import parse_io_tests

    with pytest.raises(ValueError, match=re.escape(error)):
        parse_io_tests(tests)
