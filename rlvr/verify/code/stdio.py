"""stdin/stdout tests: the solution is a whole program, run once per case in its own sandbox.

    cases = parse_io_tests(problem_tests)        # from {"stdin_stdout": [{"stdin": ..., "stdout": ...}]}
    verdict = check_io_tests(solution, cases)

Problems store these tests as the JSON `{"stdin_stdout": [{"stdin": ..., "stdout": ...}]}`
(`io_tests_json`, `parse_io_tests`). Each case is a fresh run (rlvr.verify.code.launcher), so no
state carries from one case to the next; the output is compared HERE, on the host, as text after
whitespace normalisation: fraction = cases passed / cases, over the cases the prompt does not show
(`"shown": [indices]` in the JSON: the examples gate the fraction and never count in it).

What it decides: which cases printed the expected output and exited 0. What it does not defend:
the program may print the right answer by any means (hard-coding the cases it can guess); each
line is compared with its leading whitespace stripped too, so where the indentation is the answer
(a centred pyramid) a left-aligned one passes; stdout
is the answer, so printing is not forging (`open('/dev/stdout', 'w')` writes the same stream:
harness/limits.py's `open_std_pipes`). The expected outputs never enter the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlvr.verify.code.launcher import DEFAULT_LIMITS, Limits, run_program
from rlvr.verify.code.verdict import CodeVerdict

STDIN_STDOUT = "stdin_stdout"  # the key of a stdin/stdout problem's tests JSON


SHOWN = "shown"  # the optional key listing the cases the prompt shows as examples (by index)


@dataclass(frozen=True)
class IOTests:
    """stdin -> expected stdout cases, compared after whitespace normalisation; `shown`: the indices of
    the cases the prompt shows as examples (they gate the fraction and never count in it)."""

    solution: str
    cases: Sequence[tuple[str, str]]
    shown: frozenset[int] = frozenset()


def io_tests_json(cases: Sequence[tuple[str, str]], *, shown: Sequence[int] = ()) -> str:
    """The problems.tests text of a stdin/stdout problem (`shown`: the cases its prompt shows).

    >>> io_tests_json([("1 2\\n", "3\\n")])
    '{"stdin_stdout": [{"stdin": "1 2\\\\n", "stdout": "3\\\\n"}]}'
    >>> io_tests_json([("1\\n", "1\\n"), ("2\\n", "2\\n")], shown=[0]).endswith(', "shown": [0]}')
    True
    """
    data: dict = {STDIN_STDOUT: [{"stdin": given, "stdout": expected} for given, expected in cases]}
    return json.dumps(data | ({SHOWN: sorted(shown)} if shown else {}))


def parse_io_tests(tests: str) -> tuple[tuple[str, str], ...]:
    """(stdin, expected stdout) cases from `{"stdin_stdout": [{"stdin": ..., "stdout": ...}, ...]}`."""
    return parse_io(tests)[0]


def parse_io(tests: str) -> tuple[tuple[tuple[str, str], ...], frozenset[int]]:
    """The cases of a stdin/stdout tests JSON and the indices of those its prompt shows (the optional
    `"shown": [indices]`), read and checked once.

    Raises ValueError naming what is wrong: not JSON, other keys, no cases, a case without
    string "stdin" and "stdout", a shown index that names no case.
    """
    shape = '{"stdin_stdout": [{"stdin": "...", "stdout": "..."}, ...], "shown": [0]}'
    try:
        data = json.loads(tests)
    except json.JSONDecodeError as err:
        raise ValueError(f"stdin/stdout tests are not valid JSON ({err}); expected {shape}") from err
    if not isinstance(data, dict) or STDIN_STDOUT not in data or set(data) - {STDIN_STDOUT, SHOWN}:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"stdin/stdout tests must be a JSON object with the key {STDIN_STDOUT!r} (and optionally {SHOWN!r}), "
            f"got {got}; expected {shape}"
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
    shown = data.get(SHOWN, [])
    if not isinstance(shown, list) or not all(type(i) is int and 0 <= i < len(cases) for i in shown):
        raise ValueError(f"stdin/stdout tests: {SHOWN!r} must list indices of cases (0 to {len(cases) - 1}), got {shown!r}")
    return tuple((case["stdin"], case["stdout"]) for case in cases), frozenset(shown)


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
    shown: frozenset[int] = frozenset(),
) -> CodeVerdict:
    """Run the solution once per (stdin, expected stdout) case; passed = every case passed. The fraction
    is over the cases the prompt does not show: a shown example pays nothing (printing the prompt's own
    example output earns no credit), and failing one makes the fraction 0, as for assert tests."""
    if not cases:
        raise ValueError("check_io_tests needs at least one (stdin, expected) case")
    ok, first_failure, seconds, wall_timeout = set(), "", 0.0, False
    for i, (given, expected) in enumerate(cases):
        result = run_program(solution, stdin=given, limits=limits, hide=hide, packages=packages)
        seconds += result.seconds
        wall_timeout |= result.wall_timeout
        if result.status == "ok" and normalise_output(result.stdout) == normalise_output(expected):
            ok.add(i)
            continue
        if not first_failure:
            why = f"expected {_short(expected)}, got {_short(result.stdout)}" if result.status == "ok" else result.reason
            first_failure = f"test {i + 1} of {len(cases)}: {why}"
    n = len(cases)
    if len(ok) == n:
        return CodeVerdict(True, 1.0, f"passed: {n} of {n} tests", seconds)
    paid = [i for i in range(n) if i not in shown] or list(range(n))
    fraction = 0.0 if shown - ok else sum(i in ok for i in paid) / len(paid)
    gate = f"; the prompt's example (test {min(shown - ok) + 1}) failed, so none counts" if shown - ok else ""
    return CodeVerdict(
        False,
        fraction,
        f"failed: {len(ok)} of {n} tests passed; first failure {first_failure}{gate}",
        seconds,
        wall_timeout,
    )


def _short(text: str, width: int = 80) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[:width] + "...")
