"""Assert-style tests (HumanEval's `check(candidate)`): every assert counted, across a process boundary.

    verdict = check_assert_tests(solution, "assert add(2, 3) == 5")

The test program is rewritten before it runs (`instrument_asserts`): every `assert` statement, in
functions such as `check(candidate)` too, reports to a recorder and execution goes on after a
failing or raising one. CodeVerdict.fraction = asserts passed / assert statements in the test program
(an assert in a loop is one statement: it passes if every execution did); asserts that never ran
(killed, timed out, crashed first, branch not taken) count as failed; CodeVerdict.passed needs every
assert passed and the program run to the end.

The tests run in harness.py's `tests` role, in a process of their own; the solution runs in
another (its own uid under root, rlimits) and the two speak plain data only. The names the tests
use and do not define (`free_names`: the entry point, `candidate`'s target, helpers) are asked of
the solution: a function becomes a proxy that sends its arguments and receives its result as data,
a value comes over as data, a module is imported by the harness itself. So an answer object whose
`__eq__` always returns True cannot be compared (it is not plain data: the call fails with that
reason), and the assert machinery is in no process the solution can reach: frames, gc, trace
functions, patched builtins or AssertionError, an early exit and forged output change nothing.
The report pipe records carry a random key besides (defence in depth: only the harness has it).

What it decides: the fraction and the reason. What it does not defend: see harness.py (hard-coded
answers; helpers of the solution that a test trusts; values that are not plain data fail).
"""

from __future__ import annotations

import ast
import builtins
import functools
import marshal
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlvr.verify.code.launcher import DEFAULT_LIMITS, Limits, _last_line, _launch, limit_values, new_uid
from rlvr.verify.code.verdict import CodeVerdict

# "entered site i" records before the harness reports only sites it had not entered since
ENTER_RECORDS = 1000


@dataclass(frozen=True)
class AssertTests:
    """Program = solution, then the test program; every assert in it is counted."""

    solution: str
    tests: str


_HOOK = "\x00rlvr-assert-hook\x00"  # no spaces; a constant the harness swaps for its recorder (never a name)


@dataclass(frozen=True)
class AssertSite:
    """One `assert` statement of a test program (static: an assert in a loop is one site)."""

    line: int
    text: str  # its first source line, stripped


class _AssertRewriter(ast.NodeTransformer):
    """`assert T, M` -> `try: H(i); if T: H(i, True) else: raise AssertionError(M)` /
    `except BaseException as e: H(i, e)`.

    Every assert, in functions (HumanEval's `check(candidate)`) and classes too, reports to the
    hook `H` and execution goes on after a failing or raising one. `H` is `[_HOOK][0]`: a
    constant the harness replaces in the code object, so no global name leads the solution to it
    (and a list, not a bare constant: calling a constant draws a SyntaxWarning).
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.sites: list[AssertSite] = []

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        site = len(self.sites)
        text = self.lines[node.lineno - 1].strip() if node.lineno <= len(self.lines) else ""
        self.sites.append(AssertSite(node.lineno, text[:200]))
        hook = ast.Subscript(ast.List([ast.Constant(_HOOK)], ast.Load()), ast.Constant(0), ast.Load())
        error = ast.Name("_rlvr_assert_error", ast.Load())
        failure = ast.Call(ast.Name("AssertionError", ast.Load()), [node.msg] if node.msg else [], [])
        enter = ast.Expr(ast.Call(hook, [ast.Constant(site)], []))
        check = ast.If(
            node.test,
            [ast.Expr(ast.Call(hook, [ast.Constant(site), ast.Constant(True)], []))],
            [ast.Raise(failure)],
        )
        handler = ast.ExceptHandler(
            ast.Name("BaseException", ast.Load()),
            error.id,
            [ast.Expr(ast.Call(hook, [ast.Constant(site), error], []))],
        )
        new = ast.Try([enter, check], [handler], [], [])
        # the new nodes take the assert's position (tracebacks); the test and message keep theirs
        kept = {id(n) for part in (node.test, node.msg) if part is not None for n in ast.walk(part)}
        for n in ast.walk(new):
            if id(n) not in kept and "lineno" in n._attributes:
                ast.copy_location(n, node)
        return new


def instrument_asserts(tests: str) -> tuple[ast.Module, list[AssertSite]]:
    """The test program with every assert reporting to the harness's hook, and its assert sites.

    Raises ValueError when `tests` is not valid Python (a data error: tests are ground truth).
    """
    try:
        tree = ast.parse(tests, "tests.py")
    except SyntaxError as err:
        raise ValueError(f"the test program is not valid Python: {err.msg} at tests.py line {err.lineno}") from err
    rewriter = _AssertRewriter(tests.splitlines())
    return ast.fix_missing_locations(rewriter.visit(tree)), rewriter.sites


@functools.lru_cache(maxsize=512)  # the same tests come back G times per prompt
def _compiled_tests(tests: str) -> tuple[bytes, tuple[AssertSite, ...], tuple[str, ...]]:
    """marshal'd code of the instrumented tests (the sandbox runs this same interpreter), its
    assert sites and its free names."""
    tree, sites = instrument_asserts(tests)
    names = tuple(free_names(ast.parse(tests)))
    return marshal.dumps(compile(tree, "tests.py", "exec")), tuple(sites), names


# Runs as /tmp/harness.py. The secret fd holds "<report fd> <key> <hook placeholder> <enter
# budget>\n<marshal'd tests>"; it is read and closed before the solution runs. The report pipe
# moves to a random free fd number (not inherited across exec); the key lives only in the
# recorder's closure (no module global, no local of _main); os.write is bound before the
# solution can patch it. Records:
# "<key> B <site>" (entering a site other than the last one entered; after ENTER_RECORDS of them
# "<key> L <site>" once per site instead), "<key> P <site>" (first pass), "<key> F <site>


def free_names(tree: ast.Module) -> list[str]:
    r"""Names the test program reads but neither defines at module level nor gets from builtins:
    what it expects the solution to provide (a name local to a test function is asked too, harmlessly).

    >>> free_names(ast.parse("import math\ndef check(candidate):\n    assert candidate(1) == f(2)\ncheck(g)"))
    ['candidate', 'f', 'g']
    """
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(loads - bound - set(dir(builtins)))


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


def _assert_verdict(sites: Sequence[AssertSite], report: _Report, stop: str | None, solution: str) -> tuple[bool, float, str]:
    """(passed, fraction, reason) from the report; `stop` says why the program did not finish.

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
    if report.startup is not None:
        ok = set()  # `assert True` passes without a solution; a solution that did not start earns nothing
    counts = f"{len(ok)} of {n} asserts passed"
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
    return False, len(ok) / n, reason


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
    code, sites, names = _compiled_tests(tests)
    key = secrets.token_hex(16)
    header = {
        "key": key,
        "hook": _HOOK,
        "budget": ENTER_RECORDS,
        "names": list(names),
        "limits": limit_values(limits),
        "uid_solution": new_uid(),
        "uid_harness": new_uid(),
    }
    result, data = _launch(
        {"/tmp/solution.py": solution.encode()},
        ["tests"],
        stdin=None,
        limits=limits,
        hide=hide,
        packages=packages,
        header=header,
        payload=code,
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
    passed, fraction, reason = _assert_verdict(sites, report, stop, solution)
    if report.died is not None and not passed:
        cause = _startup_reason(0, report.died, solution=solution, limits=limits)
        if not cause.startswith("failed:"):  # a limit killed it: that is the reason, not the assert it broke
            reason = f"{cause}; {reason.rsplit('; ', 1)[-1] if ' asserts passed' in reason else reason}"
    return CodeVerdict(passed, fraction, reason, result.seconds)


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
