"""The code tier: a response's ```python block run against the problem's tests in a bubblewrap sandbox.

    verdicts = check_many([make_check(extract_code(response), problem_tests) for ...])

    extract.py      which part of a response is the program (extract_code)
    launcher.py     one sandboxed run: bwrap started with rlimits and a uid drop, its streams read, its
                    status classified
    bwrap.py        bwrap's command line: namespaces, the root it sees, and whether it runs here (sandbox_mode)
    harness/        the program inside the sandbox (standard library only, copied in compiled): the
                    launcher's exec, the assert harness, and the solution's own process (forked from
                    it before it reads the tests) that answers calls as plain data
    asserts.py      assert-style tests (HumanEval): per-assert fraction, across a process boundary
    instrument.py   the test program made ready: asserts rewritten to report, which sites count
    taint.py        which asserts test the solution (a taint by name from what the tests ask of it)
    prompt.py       what the prompt gives: helpers the tests trust (run on both sides), entry points
    prompt_text.py  the code a prompt's text gives (fenced, indented or bare)
    examples.py     the example calls a prompt shows with their answers (they pay nothing)
    stdio.py        stdin/stdout tests: one run per case, output compared on the host
    verdict.py      CodeVerdict, what every kind returns

Each module's docstring says what it decides and what it does not defend. A SandboxError (the
sandbox itself broke) is never a 0 score: it propagates. Test: tests/integration/test_sandbox.py,
tests/integration/test_redteam.py, tests/integration/test_humaneval.py, tests/integration/test_stdio.py, tests/integration/test_code_trust.py.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rlvr.verify.code.asserts import AssertTests, check_assert_tests
from rlvr.verify.code.bwrap import SandboxError, sandbox_mode, sandbox_problem
from rlvr.verify.code.extract import extract_code
from rlvr.verify.code.instrument import AssertSite, compiled_tests, instrument_asserts
from rlvr.verify.code.launcher import DEFAULT_LIMITS, UID_BASE, UID_SPAN, Limits, RunResult, run_program
from rlvr.verify.code.stdio import STDIN_STDOUT, IOTests, check_io_tests, io_tests_json, parse_io, parse_io_tests
from rlvr.verify.code.verdict import CodeVerdict

log = logging.getLogger(__name__)

__all__ = [
    "UID_BASE",
    "UID_SPAN",
    "AssertSite",
    "AssertTests",
    "IOTests",
    "Limits",
    "RunResult",
    "SandboxError",
    "CodeVerdict",
    "check_assert_tests",
    "check_io_tests",
    "check_many",
    "extract_code",
    "instrument_asserts",
    "io_tests_json",
    "make_check",
    "parse_io_tests",
    "run_program",
    "sandbox_mode",
    "sandbox_problem",
]


def make_check(solution: str, tests: str) -> AssertTests | IOTests:
    """The check a problem's tests text asks for: IOTests for a JSON object with the key
    "stdin_stdout", else AssertTests (an assert-style Python test program).

    Raises ValueError with the reason when the tests are malformed: stdin/stdout JSON of the wrong
    shape (see parse_io_tests), another JSON object, or a test program that is not valid Python.
    """
    if tests is None:
        raise ValueError("the problem has no tests (tests is null); code problems need a test program or stdin/stdout JSON")
    if tests.lstrip().startswith("{"):
        try:
            data = json.loads(tests)
        except json.JSONDecodeError:
            data = None  # perhaps Python that starts with a brace; the checks below decide
        if isinstance(data, dict) or f'"{STDIN_STDOUT}"' in tests:
            return IOTests(solution, *parse_io(tests))
    compiled_tests(tests)  # ValueError if not valid Python; cached for the run itself
    return AssertTests(solution, tests)


def check_many(
    items: Sequence[AssertTests | IOTests],
    *,
    limits: Limits = DEFAULT_LIMITS,
    hide: Sequence[str | Path] = (),
    packages: Sequence[str] = (),
    workers: int | None = None,
) -> list[CodeVerdict]:
    """Run many checks in parallel (one sandbox per run, `workers` at a time); input order kept.

    Runs share the cores, and a program may keep them busy (its processes spinning) while it passes
    its own tests, so that the runs beside it hit their wall-clock limit: the group-mates of a
    rollout fail and its advantage rises. So every run killed at its wall-clock
    limit is run again once the batch is done, beside the other such runs only, and that verdict
    counts; a program that is slow on its own is slow again. CPU-second limits are per process and
    need no second run.

    `packages`: the allowlist of importable packages (e.g. ("numpy",)); nothing else is installed
    in the sandbox. A SandboxError (the sandbox itself broke) propagates: it is never turned into a
    0 score; so does the ValueError of a test program that is not valid Python (use make_check first).
    """
    sandbox_mode()  # fails here, before any run, when the sandbox cannot start at all

    def one(item: AssertTests | IOTests) -> CodeVerdict:
        if isinstance(item, AssertTests):
            return check_assert_tests(item.solution, item.tests, limits=limits, hide=hide, packages=packages)
        return check_io_tests(item.solution, item.cases, limits=limits, hide=hide, packages=packages, shown=item.shown)

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        verdicts = list(pool.map(one, items))
        again = [i for i, v in enumerate(verdicts) if v.wall_timeout]
        if again and len(again) < len(items):
            log.info("code: %d of %d runs hit the wall-clock limit beside others; running them again", len(again), len(items))
            for i, verdict in zip(again, pool.map(one, [items[i] for i in again]), strict=True):
                verdicts[i] = verdict
    return verdicts
