"""stdin/stdout tests: the solution is a whole program, run once per case in its own sandbox.

    cases = parse_io_tests(problem_tests)        # from {"stdin_stdout": [{"stdin": ..., "stdout": ...}]}
    verdict = check_io_tests(solution, cases)

Problems store these tests as the JSON `{"stdin_stdout": [{"stdin": ..., "stdout": ...}]}`
(`io_tests_json`, `parse_io_tests`). Each case is a fresh run (rlvr.verify.code.launcher), so no
state carries from one case to the next; the output is compared HERE, on the host, as text after
whitespace normalisation: fraction = cases passed / cases.

What it decides: which cases printed the expected output and exited 0. What it does not defend:
the program may print the right answer by any means (hard-coding the cases it can guess); each
line is compared with its leading whitespace stripped too, so where the indentation is the answer
(a centred pyramid) a left-aligned one passes; stdout
is the answer, so printing is not forging (`open('/dev/stdout', 'w')` writes the same stream:
harness.py's `open_std_pipes`). The expected outputs never enter the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlvr.verify.code.launcher import DEFAULT_LIMITS, Limits, run_program
from rlvr.verify.code.verdict import CodeVerdict

STDIN_STDOUT = "stdin_stdout"  # the key of a stdin/stdout problem's tests JSON


@dataclass(frozen=True)
class IOTests:
    """stdin -> expected stdout cases, compared after whitespace normalisation."""

    solution: str
    cases: Sequence[tuple[str, str]]


def io_tests_json(cases: Sequence[tuple[str, str]]) -> str:
    """The problems.tests text of a stdin/stdout problem.

    >>> io_tests_json([("1 2\\n", "3\\n")])
    '{"stdin_stdout": [{"stdin": "1 2\\\\n", "stdout": "3\\\\n"}]}'
    """
    return json.dumps({STDIN_STDOUT: [{"stdin": given, "stdout": expected} for given, expected in cases]})


def parse_io_tests(tests: str) -> tuple[tuple[str, str], ...]:
    """(stdin, expected stdout) cases from `{"stdin_stdout": [{"stdin": ..., "stdout": ...}, ...]}`.

    Raises ValueError naming what is wrong: not JSON, other keys, no cases, a case without
    string "stdin" and "stdout".
    """
    shape = '{"stdin_stdout": [{"stdin": "...", "stdout": "..."}, ...]}'
    try:
        data = json.loads(tests)
    except json.JSONDecodeError as err:
        raise ValueError(f"stdin/stdout tests are not valid JSON ({err}); expected {shape}") from err
    if not isinstance(data, dict) or set(data) != {STDIN_STDOUT}:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"stdin/stdout tests must be a JSON object with the one key {STDIN_STDOUT!r}, got {got}; expected {shape}"
        )
    cases = data[STDIN_STDOUT]
    if not isinstance(cases, list) or not cases:
        raise ValueError(f"stdin/stdout tests: {STDIN_STDOUT!r} must be a non-empty list of cases; expected {shape}")
    for i, case in enumerate(cases):
        if not (isinstance(case, dict) and set(case) == {"stdin", "stdout"} and all(isinstance(v, str) for v in case.values())):
            raise ValueError(
                f"stdin/stdout tests: case {i} must be an object with string 'stdin' and 'stdout' "
                f"and nothing else, got {json.dumps(case)[:120]}"
            )
    return tuple((case["stdin"], case["stdout"]) for case in cases)


def normalise_output(text: str) -> list[str]:
    """Lines with surrounding whitespace stripped; blank lines at the ends dropped."""
    return [ln.strip() for ln in text.strip().splitlines()]


def check_io_tests(
    solution: str,
    cases: Sequence[tuple[str, str]],
    *,
    limits: Limits = DEFAULT_LIMITS,
    hide: Sequence[str | Path] = (),
    packages: Sequence[str] = (),
) -> CodeVerdict:
    """Run the solution once per (stdin, expected stdout) case; fraction = cases passed."""
    if not cases:
        raise ValueError("check_io_tests needs at least one (stdin, expected) case")
    passed, first_failure, seconds, wall_timeout = 0, "", 0.0, False
    for i, (given, expected) in enumerate(cases, start=1):
        result = run_program(solution, stdin=given, limits=limits, hide=hide, packages=packages)
        seconds += result.seconds
        wall_timeout |= result.wall_timeout
        if result.status == "ok" and normalise_output(result.stdout) == normalise_output(expected):
            passed += 1
            continue
        if not first_failure:
            why = f"expected {_short(expected)}, got {_short(result.stdout)}" if result.status == "ok" else result.reason
            first_failure = f"test {i} of {len(cases)}: {why}"
    n = len(cases)
    if passed == n:
        return CodeVerdict(True, 1.0, f"passed: {n} of {n} tests", seconds)
    return CodeVerdict(
        False,
        passed / n,
        f"failed: {passed} of {n} tests passed; first failure {first_failure}",
        seconds,
        wall_timeout,
    )


def _short(text: str, width: int = 80) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[:width] + "...")
