"""Assert-style tests (HumanEval's `check(candidate)`): every assert counted, across a process boundary.

    verdict = check_assert_tests(solution, "assert add(2, 3) == 5")

The test program is rewritten before it runs (`instrument_asserts`): every `assert` statement, in
functions such as `check(candidate)` too, reports to a recorder and execution goes on after a
failing or raising one; one that fails while another assert's condition runs (a test's helper that
asserts, called in an assert) raises on, so that the outer assert fails too, as in one process. CodeVerdict.fraction = asserts passed / assert statements in the test program
(an assert in a loop is one statement: it passes if every execution did); asserts that never ran
(killed, timed out, crashed first, branch not taken) count as failed, except an `assert False` in a
run that finished (it marks a line the tests must not reach: `try: f(-1); assert False` / `except
ValueError: pass`, or `else: assert False`); CodeVerdict.passed needs every
assert passed and the program run to the end. The fraction counts only the asserts that test the
solution (`_assert_kinds`: the condition depends on a call of the solution, and does not compare
the solution with itself: `_self_comparison`), less the prompt's own
examples (an assert calling the candidate only on arguments the prompt shows, rlvr.verify.code.prompt):
`assert True` and `assert candidate(2, 3) == 5` under a prompt showing `add(2, 3)` pay nothing, and
a failed example makes the fraction 0 (a constant is not paid for the tests it happens to match).
Where that leaves nothing, the examples count; where no assert calls the solution, all do.
A tests text may carry the prompt's code in front (rlvr.verify.code.prompt.tests_with_prompt): its
helpers run on both sides and are never asked of the solution; the entry points they call are
(`double_all` calling the stub `double`: the tests name only `double_all`).

The tests run in harness.py's `tests` role, in a process of their own; the solution runs in
another (its own uid under root, rlimits; a fork of the harness made before the harness reads the
tests, so it holds nothing of them) and the two speak plain data only. The names the tests
use and do not define (`free_names`: the entry point, `candidate`'s target, helpers) are asked of
the solution: a function becomes a proxy that sends its arguments and receives its result as data,
a value comes over as data, a module is imported by the harness itself. So an answer object whose
`__eq__` always returns True cannot be compared (it is not plain data: the call fails with that
reason), and the assert machinery is in no process the solution can reach: frames, gc, trace
functions, patched builtins or AssertionError, an early exit and forged output change nothing.
The report pipe records carry a random key besides (defence in depth: only the harness has it).

Which asserts depend on the solution (`_flows`): a name written from a call of it (`r = f(x)`,
`q, r = f(x)`, `head, *rest = f(x)`), a list it may have changed in place (`f(xs)`, then
`assert xs == ...`), a container a library call fills with its results (`heapq.heappush(h,
f(x))`, `bisect.insort`, `list.append(got, ...)`, `operator.setitem`, `print(f(x), file=buf)`:
each argument of a call of a function the program does not define is written from the others), a
name set under a condition, a `match` on it (flags and captures) or in a `try` that calls it (a
flag set in `except ValueError:`, `except ValueError as e: msg = str(e)`), a test function's
parameter by the argument it gets (`check(candidate, ref)`: a reference passed beside the
candidate is not the solution, so `candidate(n) == ref(n)` is no self-comparison; `map(verify,
results, xs)`: verify's parameters get the other arguments).

What it decides: the fraction and the reason. What it does not defend: see harness.py (hard-coded
answers; values that are not plain data fail); the taint is by name and flow-insensitive, so an
assert on the test's own data that shares a name with a solution's result still counts (an
argument of the solution's call is such a name too: `candidate(n)` marks `n` everywhere, and so is
an argument beside it in any library call: `print(n, f(n))`); a dependence the names do not show
(`eval` of a string, `globals()[...]`, `setattr`, output captured with `redirect_stdout`) or a
flag set in a `with` block around the call (`contextlib.suppress`) is not followed, and such an
assert is left out of the fraction.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import marshal
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlvr.verify.code.examples import call_key
from rlvr.verify.code.launcher import DEFAULT_LIMITS, Limits, _last_line, _launch, limit_values, new_uid
from rlvr.verify.code.prompt import module_reads, prompt_facts, split_prompt
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
        self.nodes: list[ast.Assert] = []  # the original statements, in site order

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        site = len(self.sites)
        text = self.lines[node.lineno - 1].strip() if node.lineno <= len(self.lines) else ""
        self.sites.append(AssertSite(node.lineno, text[:200]))
        self.nodes.append(node)
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


def _parse_tests(tests: str) -> ast.Module:
    try:
        return ast.parse(tests, "tests.py")
    except SyntaxError as err:
        raise ValueError(f"the test program is not valid Python: {err.msg} at tests.py line {err.lineno}") from err


def instrument_asserts(tests: str) -> tuple[ast.Module, list[AssertSite]]:
    """The test program with every assert reporting to the harness's hook, and its assert sites.

    Raises ValueError when `tests` is not valid Python (a data error: tests are ground truth).
    """
    tree, sites, _ = _instrument(_parse_tests(tests), tests)
    return tree, sites


def _instrument(tree: ast.Module, tests: str) -> tuple[ast.Module, list[AssertSite], list[ast.Assert]]:
    rewriter = _AssertRewriter(tests.splitlines())
    return ast.fix_missing_locations(rewriter.visit(tree)), rewriter.sites, rewriter.nodes


@dataclass(frozen=True)
class _Compiled:
    code: bytes  # marshal'd instrumented test program (the sandbox runs this same interpreter)
    sites: tuple[AssertSite, ...]
    counted: tuple[bool, ...]  # per site: does it count in the fraction (`_counted`)
    gate: tuple[bool, ...]  # per site: must it pass for any fraction (`_gate`: the examples left out)
    names: tuple[str, ...]  # asked of the solution
    helpers: str  # the prompt's trusted definitions (rlvr.verify.code.prompt), run before both sides
    never: tuple[bool, ...] = ()  # per site: `assert False`, a line the tests must not reach (`_never`)
    solution_side: str = ""  # the helpers as the solution's process runs them (prompt.PromptFacts.solution_side)


@functools.lru_cache(maxsize=512)  # the same tests come back G times per prompt
def _compiled_tests(tests: str) -> _Compiled:
    """The tests text, ready to send: its prompt part split off (rlvr.verify.code.prompt), the rest
    instrumented. Raises ValueError when either part is not valid Python."""
    prompt_code, program = split_prompt(tests)
    facts = prompt_facts(prompt_code, program)
    if prompt_code and not facts.entry_points and not _parses(prompt_code):
        raise ValueError("the prompt's code in the tests text is not valid Python")
    tree = _parse_tests(program)
    names = [n for n in free_names(tree) if n not in facts.helper_names]
    # an entry point the prompt's helpers call (`double_all` calling the stub `double`) is asked too,
    # though the tests never name it: the helpers run in the harness and call the solution's
    callers = _callers(facts.helpers, facts.entry_points)
    names += sorted(callers & facts.entry_points - set(names))
    # and one the prompt's code names at module level (`OPS = {"square": square}`, `def g(fn=f)`: run after the solution)
    names += sorted((_loads(ast.parse(facts.after)) if facts.after else set()) & facts.entry_points - set(names))
    # `double_all(...)` and `OPS[...]` depend on the solution
    kinds = _assert_kinds(tree, set(names) | callers | facts.late_names, facts.shown)
    tree, sites, nodes = _instrument(tree, program)
    site_kinds = tuple(kinds.get(id(n), "other") for n in nodes)
    counted = _counted(site_kinds)
    return _Compiled(
        marshal.dumps(compile(tree, "tests.py", "exec")),
        tuple(sites),
        counted,
        _gate(site_kinds),
        tuple(names),
        facts.helpers,
        tuple(_never(n) for n in nodes),
        facts.solution_side,
    )


def _callers(helpers: str, entries: frozenset[str]) -> set[str]:
    """The entry points the prompt's helpers call and the helper functions that call one, directly
    or through another (`double_all` calling the stub `double`).

    >>> sorted(_callers("def double_all(ns):\\n    return [double(n) for n in ns]\\ndef g():\\n    return 1", frozenset({"double"})))
    ['double', 'double_all']
    """
    if not helpers:
        return set()
    reads: dict[str, set[str]] = {}
    for node in ast.parse(helpers).body:
        for name, found in module_reads(node).items():
            reads[name] = reads.get(name, set()) | found
    called = {e for e in entries if any(e in r for r in reads.values())}
    found = set(called)
    changed = True
    while changed:
        new = {name for name, r in reads.items() if r & found} - found
        found |= new
        changed = bool(new)
    return found


def _never(node: ast.Assert) -> bool:
    """An assert of a false constant (`assert False, 'expected ValueError'`): it marks a line the tests
    must not reach (`try: f(-1); assert False / except ValueError: pass`, or in `else:`), so in a run
    that finishes it passes when it never ran; reached, it fails as any assert does.

    >>> _never(ast.parse("assert False, 'no'").body[0]), _never(ast.parse("assert x").body[0])
    (True, False)
    """
    return isinstance(node.test, ast.Constant) and not node.test.value


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def _counted(kinds: tuple[str, ...]) -> tuple[bool, ...]:
    """Which sites the fraction counts: those that test the solution ("test"), not the prompt's own
    examples nor asserts that call nothing of the solution (`assert True`); where no site is a
    "test", the examples count, and where none depends on the solution at all, every site does.

    >>> _counted(("other", "test", "example")), _counted(("other", "example")), _counted(("other",))
    ((False, True, False), (False, True), (True,))
    """
    for wanted in ({"test"}, {"test", "example"}):
        if any(k in wanted for k in kinds):
            return tuple(k in wanted for k in kinds)
    return tuple(True for _ in kinds)


def _gate(kinds: tuple[str, ...]) -> tuple[bool, ...]:
    """The sites a fraction needs passed before it pays anything: the prompt's own examples, when the
    fraction leaves them out. They pay nothing, and a solution that fails one earns 0, so a constant
    (`return False` where the examples expect True, `return None`) is not paid for the tests its
    constant happens to match (issue 19, round 3: `return False` earned 1.0 on HumanEval/40 and /54,
    whose every assert beyond the examples expects False).

    >>> _gate(("other", "test", "example")), _gate(("other", "example"))
    ((False, False, True), (False, False))
    """
    if "test" not in kinds:
        return tuple(False for _ in kinds)
    return tuple(k == "example" for k in kinds)


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


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _root_name(target: ast.AST) -> str | None:
    """The variable an assignment target changes: `x`, `x[i]`, `x.a` -> "x"."""
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _target_names(target: ast.AST) -> list[str | None]:
    """The variables a target changes, through tuple and list unpacking: `q, r`, `head, *rest`,
    `[a, (b, c[0])]`."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for t in target.elts for name in _target_names(t)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return [_root_name(target)]


def _bound_in(statements: list[ast.stmt]) -> list[str]:
    """Every name the statements bind (and `except ... as e` names), nested blocks included."""
    names = []
    for n in (m for s in statements for m in ast.walk(s)):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.append(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.append(n.name)
    return names


def _call_params(call: ast.Call, defs: list[ast.AST]) -> list[tuple[list[str], list[ast.AST]]]:
    """(parameters, the arguments they get) for a call of a function the program defines: each
    parameter from its own argument (`check(candidate, ref)`: `ref` is not the candidate), all of
    them from all the arguments where a * or ** makes the match unknown."""
    flows = []
    for d in defs:
        a = d.args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        everything = [p.arg for p in ast.walk(a) if isinstance(p, ast.arg)]
        parts = [*call.args, *(k.value for k in call.keywords)]
        if a.vararg or a.kwarg or any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            flows.append((everything, parts))
            continue
        flows += [([p], [x]) for p, x in zip(positional, call.args)]
        flows += [([k.arg], [k.value]) for k in call.keywords]
    return flows


def _bound_anywhere(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return bound


def _flows(tree: ast.Module, defs: dict[str, list[ast.AST]]) -> list[tuple[list[str | None], list[ast.AST]]]:
    """(names written, expressions they are written from) for every binding in the program,
    flow-insensitive: `r = f(x)`, `q, r = f(x)`, `for r in f(x)`, `r.append(f(x))`,
    `def g(): ... f() ...`, `check(f, ref)` writing `check`'s parameters one by one, `f(xs)` writing
    `xs` (a call of the solution may change its argument in place), a call of any function the
    program does not define writing each argument from the others (`heapq.heappush(h, f(x))`,
    `bisect.insort(out, f(x))`, `list.append(got, f(x))`, `print(f(x), file=buf)`), a function
    of the program passed as an argument getting the other arguments (`map(verify, results, xs)`),
    and control: every name bound under `if f(x):`, `while f(x):`, `for ... in f(x):`, `match
    f(x):` (its captures too) or in a `try:` whose body calls f (a flag set in `except`, `except
    ValueError as e`) is written from that condition or body."""
    flows: list[tuple[list[str | None], list[ast.AST]]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            flows.append(([name for t in n.targets for name in _target_names(t)], [n.value]))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
            flows.append(([_root_name(n.target)], [n.value]))
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            flows.append(([_root_name(t) for t in ast.walk(n.target) if isinstance(t, ast.Name)], [n.iter]))
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            flows.append((_target_names(n.optional_vars), [n.context_expr]))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):  # its own parameters are not the program's names
            params = {a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg)}
            flows.append(([n.name], [ast.Name(x, ast.Load()) for x in sorted(_loads(n) - params)]))
        elif isinstance(n, ast.ClassDef):
            flows.append(([n.name], [n]))
        elif isinstance(n, ast.Call):
            parts = [*n.args, *(k.value for k in n.keywords)]
            if isinstance(n.func, ast.Attribute):  # x.append(f(1)), x.update(...)
                flows.append(([_root_name(n.func.value)], parts))
            if isinstance(n.func, ast.Name) and n.func.id in defs:  # check(candidate): its parameters
                flows += _call_params(n, defs[n.func.id])
            else:  # candidate(xs): xs as the solution left it; heapq.heappush(h, f(1)), print(f(1), file=buf)
                flows.append(([_root_name(p) for p in parts], [n.func, *parts]))
            for p in parts:  # map(verify, results, xs): verify's parameters get the other arguments
                if isinstance(p, ast.Name) and p.id in defs:
                    params = [a.arg for d in defs[p.id] for a in ast.walk(d.args) if isinstance(a, ast.arg)]
                    flows.append((params, [q for q in parts if q is not p]))
        elif isinstance(n, ast.Match):  # `match f(x): case 3: ok = True`, captures included
            captures = [getattr(m, a, None) for c in n.cases for m in ast.walk(c.pattern) for a in ("name", "rest")]
            bound = [x for x in captures if isinstance(x, str)] + _bound_in([s for c in n.cases for s in c.body])
            flows.append((bound, [n.subject, *(c.guard for c in n.cases if c.guard is not None)]))
        if isinstance(n, (ast.If, ast.While)):
            flows.append((_bound_in(n.body + n.orelse), [n.test]))
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            flows.append((_bound_in(n.body + n.orelse), [n.iter]))
        elif isinstance(n, (ast.Try, ast.TryStar)):
            flows.append((_bound_in([*n.body, *n.handlers, *n.orelse, *n.finalbody]), list(n.body)))
    return flows


def _assert_kinds(tree: ast.Module, asked: set[str], shown: frozenset[str]) -> dict[int, str]:
    """id(assert node) -> "test" (its condition depends on what the solution gave), "example"
    (it only calls the solution on arguments the prompt shows with their answer) or "other"
    (`assert True`, an assert on the test's own data). Dependence is a flow-insensitive taint:
    the names asked of the solution and not bound in the program, then everything written from them.
    """
    defs: dict[str, list[ast.AST]] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(n.name, []).append(n)
    tainted = asked - _bound_anywhere(tree)
    flows = _flows(tree, defs)
    changed = True
    while changed:
        changed = False
        for targets, sources in flows:
            new = {t for t in targets if t is not None and t not in tainted}
            if new and any(_loads(s) & tainted for s in sources):
                tainted |= new
                changed = True
    kinds: dict[int, str] = {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.Assert):
            continue
        used = _loads(n.test)
        if not used & tainted or _self_comparison(n.test, tainted):
            kinds[id(n)] = "other"
            continue
        calls = [c for c in ast.walk(n.test) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in tainted]
        # an example: every call of the solution has shown (so literal) arguments, and nothing
        # else of the solution's is read
        example = bool(calls) and all(call_key(c) in shown for c in calls) and used & tainted <= {c.func.id for c in calls}
        kinds[id(n)] = "example" if example else "test"
    return kinds


class _SameCallee(ast.NodeTransformer):
    """Every call of one of `names` as a call of `_`: the shape of an expression, whichever solution
    function it calls."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            node.func = ast.Name("_", ast.Load())
        return node


def _self_comparison(test: ast.expr, tainted: set[str]) -> bool:
    """The assert compares the solution with itself: both sides the same expression up to which of
    its names is called (HumanEval/33: `tuple(candidate([1, 2, 3])) == tuple(sort_third([1, 2, 3]))`,
    where sort_third is the solution's own function). True for any solution: it tests nothing.

    >>> _self_comparison(ast.parse("f(candidate(1)) == f(g(1))", mode="eval").body, {"candidate", "g"})
    True
    >>> _self_comparison(ast.parse("candidate(1) == candidate(2)", mode="eval").body, {"candidate"})
    False
    """
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is))):
        return False
    shape = _SameCallee(tainted)
    left, right = (ast.dump(shape.visit(copy.deepcopy(side))) for side in (test.left, test.comparators[0]))
    return left == right


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
    compiled = _compiled_tests(tests)
    sites = compiled.sites
    key = secrets.token_hex(16)
    header = {
        "key": key,
        "hook": _HOOK,
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
