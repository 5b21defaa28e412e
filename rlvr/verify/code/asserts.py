"""Assert-style tests (HumanEval's `check(candidate)`): every assert counted, across a process boundary.

    verdict = check_assert_tests(solution, "assert add(2, 3) == 5")

The test program is rewritten before it runs (rlvr.verify.code.instrument): every `assert` statement, in
functions such as `check(candidate)` too, reports to a recorder and execution goes on after a
failing or raising one; one that fails while another assert's condition runs (a test's helper that
asserts, called in an assert) raises on, so that the outer assert fails too, as in one process. CodeVerdict.fraction = asserts passed / assert statements in the test program
(an assert in a loop is one statement: it passes if every execution did); asserts that never ran
(killed, timed out, crashed first, branch not taken) count as failed, except an `assert False` in a
run that finished (it marks a line the tests must not reach: `try: f(-1); assert False` / `except
ValueError: pass`, or `else: assert False`); CodeVerdict.passed needs every
assert passed and the program run to the end. The fraction counts only the asserts that test the
solution (rlvr.verify.code.taint: the condition depends on a call of the solution, and does not compare
the solution with itself), less the prompt's own
examples (an assert calling the candidate only on arguments the prompt shows, rlvr.verify.code.examples):
`assert True` and `assert candidate(2, 3) == 5` under a prompt showing `add(2, 3)` pay nothing, and
a failed example makes the fraction 0 (a constant is not paid for the tests it happens to match).
Where that leaves nothing, the examples count; where no assert calls the solution, all do.
A tests text may carry the prompt's code in front (rlvr.verify.code.prompt.tests_with_prompt): its
helpers run on both sides and are never asked of the solution; the entry points they call are
(`double_all` calling the stub `double`: the tests name only `double_all`).

The tests run in the harness's `tests` role (rlvr.verify.code.harness), in a process of their own; the solution runs in
another (its own uid under root, rlimits; a fork of the harness made before the harness reads the
tests, so it holds nothing of them) and the two speak plain data only. The names the tests
use and do not define (`taint.free_names`: the entry point, `candidate`'s target, helpers) are asked of
the solution: a function becomes a proxy that sends its arguments and receives its result as data,
a value comes over as data, a module is imported by the harness itself. So an answer object whose
`__eq__` always returns True cannot be compared (it is not plain data: the call fails with that
reason), and the assert machinery is in no process the solution can reach: frames, gc, trace
functions, patched builtins or AssertionError, an early exit and forged output change nothing.
The report pipe records carry a random key besides (defence in depth: only the harness has it).

What it decides: the fraction and the reason. What it does not defend: see rlvr.verify.code.harness
(hard-coded answers; values that are not plain data fail) and rlvr.verify.code.taint (which asserts
count).

Test: tests/integration/test_sandbox.py, tests/integration/test_code_trust.py,
tests/integration/test_humaneval.py, tests/integration/test_redteam.py.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlvr.verify.code.instrument import HOOK, AssertSite, compiled_tests
from rlvr.verify.code.launcher import DEFAULT_LIMITS, Limits, _last_line, _launch, limit_values, new_uid
from rlvr.verify.code.verdict import CodeVerdict

# "entered site i" records before the harness reports only sites it had not entered since
ENTER_RECORDS = 1000


@dataclass(frozen=True)
class AssertTests:
    """Program = solution, then the test program; every assert in it is counted."""

    solution: str
    tests: str


# The report pipe (harness/runner.py): one record a line, each led by the run's key. "B <site>"
# entering a site other than the last one entered (after ENTER_RECORDS of them, "L <site>" once per
# site instead), "P <site>" a site's first pass, "F <site> <solution.py line> <error>" a site's first
# failure (the error text on the run's first failure only), "S <line> <error>" the solution did not
# start, "D <status>" its process ended mid-run, "END" the tests ran to the end.
@dataclass(frozen=True)
class _Report:
    passed: frozenset[int]  # sites that passed at least once
    # site -> (solution.py line or 0, error), in the order they first failed
    failed: dict[int, tuple[int, str]]
    finished: bool  # the tests ran to the end
    # sites that may have been running last (cut short if the run stopped)
    running: frozenset[int]
    # the solution did not start: (solution.py line or 0, its error or "exit N" / "signal NAME")
    startup: tuple[int, str] | None = None
    died: str | None = None  # the solution's process ended mid-run: "exit N" / "signal NAME"


def _parse_report(data: bytes, key: bytes, n_sites: int) -> _Report:
    """Records carrying `key`; anything else on the pipe (a program writing to it) is ignored."""
    passed, failed, finished, last_entered, late, startup, died = set(), {}, False, None, set(), None, None
    for raw in data.split(b"\n"):
        parts = raw.split(b" ", 4)
        if parts[0] != key or len(parts) < 2:
            continue
        if parts[1] == b"END" and len(parts) == 2:
            finished = True
        elif parts[1] == b"D" and len(parts) >= 3 and died is None:
            died = b" ".join(parts[2:]).decode(errors="replace")
        elif parts[1] == b"S" and len(parts) >= 4 and parts[2].isdigit() and startup is None:
            startup = (int(parts[2]), b" ".join(parts[3:]).decode(errors="replace"))
        elif len(parts) >= 3 and parts[2].isdigit() and int(parts[2]) < n_sites:
            if parts[1] == b"B":
                last_entered = int(parts[2])
            elif parts[1] == b"L":
                late.add(int(parts[2]))
            elif parts[1] == b"P":
                passed.add(int(parts[2]))
            elif parts[1] == b"F" and len(parts) >= 4 and parts[3].isdigit():
                text = parts[4].decode(errors="replace") if len(parts) == 5 else ""
                failed.setdefault(int(parts[2]), (int(parts[3]), text))
    running = frozenset({last_entered} - {None} | late)
    return _Report(frozenset(passed), failed, finished, running, startup, died)


def _assert_verdict(
    sites: Sequence[AssertSite],
    report: _Report,
    stop: str | None,
    solution: str,
    counted: Sequence[bool] | None = None,
    gate: Sequence[bool] | None = None,
    never: Sequence[bool] = (),
) -> tuple[bool, float, str]:
    """(passed, fraction, reason) from the report; `stop` says why the program did not finish.

    `counted` (default: all) marks the sites the fraction is over (`_counted`); passed still needs
    every site. `gate` (default: none) marks sites that must pass for the fraction to be above 0
    (`_gate`: the prompt's examples it leaves out). `never` marks `assert False` sites (`_never`):
    in a run that finished, one that never ran passed.

    A site passes when it ran and never failed; sites that never ran (killed, crashed, branch not
    taken) count as failed, and so does, in a run that did not finish, the site that ran last: it
    may have been cut short (a loop killed at its 4th pass), so a stop can cost one site that had
    in fact finished (a crash in the code after it); after ENTER_RECORDS changes of site, every
    site entered since counts as maybe last. With no asserts, the program is the test: 1 or 0.
    """
    n = len(sites)
    if n == 0:
        return (True, 1.0, "passed: the tests ran to the end") if stop is None else (False, 0.0, stop)
    ok = report.passed - report.failed.keys() - (report.running if stop is not None else set())
    if stop is None:  # `assert False` not reached: the line the tests must not reach was not
        ok |= {i for i, flag in enumerate(never) if flag and i not in report.failed}
    if report.startup is not None:
        ok = set()  # `assert True` passes without a solution; a solution that did not start earns nothing
    counted = [True] * n if counted is None else list(counted)
    paid = [i for i in range(n) if counted[i]]
    left_out = n - len(paid)
    counts = f"{sum(i in ok for i in paid)} of {len(paid)} asserts passed" + (
        f" ({left_out} not counted: the prompt's own examples, or no call of the solution)" if left_out else ""
    )
    fraction = sum(i in ok for i in paid) / len(paid)
    if gate is not None and any(g and i not in ok for i, g in enumerate(gate)):
        fraction = 0.0
        counts += "; a prompt's example failed, so none is paid"
    if stop is None and len(ok) == n:
        return True, 1.0, f"passed: {counts}"
    if report.failed:
        site, (line, error) = next(iter(report.failed.items()))
        where = _source_line(solution, line)
        first = f"failed: {error} at tests.py line {sites[site].line}: {sites[site].text}" + (
            f" (raised at solution.py line {line}: {where})" if where else ""
        )
        reason = f"{first}; {counts}" + (f"; then {stop}" if stop else "")
    elif stop is not None:
        reason = f"{stop}; {counts}"
    else:
        site = next(i for i in range(n) if i not in ok)
        reason = f"failed: the assert at tests.py line {sites[site].line} never ran: {sites[site].text}; {counts}"
    return False, fraction, reason


def _source_line(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


def check_assert_tests(
    solution: str,
    tests: str,
    *,
    limits: Limits = DEFAULT_LIMITS,
    hide: Sequence[str | Path] = (),
    packages: Sequence[str] = (),
) -> CodeVerdict:
    """Run the solution, then the test program with every assert counted (see `_assert_verdict`).

    fraction = asserts passed / assert statements in `tests`; passed = all of them passed and the
    program ran to the end. Raises ValueError when `tests` is not valid Python.
    """
    compiled = compiled_tests(tests)
    sites = compiled.sites
    key = secrets.token_hex(16)
    header = {
        "key": key,
        "hook": HOOK,
        "budget": ENTER_RECORDS,
        "names": list(compiled.names),
        "helpers": compiled.helpers,
        "uid_harness": new_uid(),
    }
    files = {"/tmp/solution.py": solution.encode()}
    if compiled.helpers:  # public (the prompt's), so the solution may read them
        files["/tmp/prompt.py"] = compiled.solution_side.encode()
    result, data = _launch(
        files,
        ["tests", *map(str, limit_values(limits)), str(new_uid())],  # the solution's limits and uid
        stdin=None,
        limits=limits,
        hide=hide,
        packages=packages,
        header=header,
        payload=compiled.code,
    )
    key = key.encode()
    report = _parse_report(data, key, len(sites))
    if report.startup is not None:
        stop = _startup_reason(*report.startup, solution=solution, limits=limits)
    elif result.status == "ok" and report.finished:
        stop = None
    elif result.status == "ok":
        stop = "failed: the test harness exited with 0 before the tests finished"
    elif result.status == "error":
        stop = _failure_reason(result.stderr, {"solution.py": solution, "tests.py": tests})
    else:
        stop = result.reason
    passed, fraction, reason = _assert_verdict(sites, report, stop, solution, compiled.counted, compiled.gate, compiled.never)
    if report.died is not None and not passed:
        cause = _startup_reason(0, report.died, solution=solution, limits=limits)
        if not cause.startswith("failed:"):  # a limit killed it: that is the reason, not the assert it broke
            reason = f"{cause}; {reason.rsplit('; ', 1)[-1] if ' asserts passed' in reason else reason}"
    return CodeVerdict(passed, fraction, reason, result.seconds, result.wall_timeout)


def _startup_reason(line: int, status: str, *, solution: str, limits: Limits) -> str:
    """Why the solution's process did not start, as a stop reason.

    >>> _startup_reason(3, "ZeroDivisionError: division by zero", solution="a\\nb\\n1/0", limits=Limits())
    'failed: ZeroDivisionError: division by zero at solution.py line 3: 1/0'
    >>> _startup_reason(0, "signal SIGXCPU", solution="", limits=Limits())
    'timeout: exceeded 5 CPU seconds (SIGXCPU)'
    """
    if status.startswith("MemoryError") or "Cannot allocate memory" in status:
        return f"memory: exceeded {limits.memory_mb} MiB ({status})"
    if status in ("signal SIGXCPU", "signal SIGKILL"):
        return f"timeout: exceeded {limits.cpu_seconds} CPU seconds ({status.split()[1]})"
    if status == "signal SIGXFSZ":
        return f"killed: wrote a file over {limits.file_mb} MiB (SIGXFSZ)"
    if status.startswith(("exit ", "signal ", "SystemExit")):
        return f"failed: the solution ended ({status}) before the tests ran"
    where = _source_line(solution, line)
    return f"failed: {status}" + (f" at solution.py line {line}: {where}" if where else "")


def _failure_reason(stderr: str, sources: dict[str, str]) -> str:
    """'failed: AssertionError at tests.py line 4: assert f(2) == 3' from a traceback."""
    last = _last_line(stderr) or "no error message"
    frames = re.findall(r'File "(solution\.py|tests\.py)", line (\d+)', stderr)
    if not frames:
        return f"failed: {last}"
    name, line = frames[-1][0], int(frames[-1][1])
    lines = sources[name].splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"failed: {last} at {name} line {line}" + (f": {text[:200]}" if text else "")
