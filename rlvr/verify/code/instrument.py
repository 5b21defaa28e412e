"""The test program made ready for the harness (rlvr.verify.code.harness): every assert rewritten to
report to a hook (`instrument_asserts`), the prompt's code split off (rlvr.verify.code.prompt), the
names asked of the solution, which sites the fraction counts (`_counted`), which must pass before it
pays anything (`_gate`: the prompt's examples) and which mark a line the tests must not reach
(`_never`), all compiled and marshal'd once per tests text (`compiled_tests`).

The rewrite: every `assert` statement, in functions such as `check(candidate)` and classes too,
reports to a recorder and execution goes on after a failing or raising one; one that fails while
another assert's condition runs (a test's helper that asserts, called in an assert) raises on, so
that the outer assert fails too, as in one process. The hook is a constant the harness swaps for its
recorder in the code object (HOOK), so no global name leads the solution to it.

Test: the doctests (tests/unit/verify/test_doctests.py), tests/integration/test_sandbox.py,
tests/integration/test_code_trust.py.
"""

from __future__ import annotations

import ast
import functools
import marshal
from dataclasses import dataclass

from rlvr.verify.code.prompt import module_reads, prompt_facts, split_prompt
from rlvr.verify.code.taint import assert_kinds, free_names, read_names

HOOK = "\x00rlvr-assert-hook\x00"  # no spaces; a constant the harness swaps for its recorder (never a name)


@dataclass(frozen=True)
class AssertSite:
    """One `assert` statement of a test program (static: an assert in a loop is one site)."""

    line: int
    text: str  # its first source line, stripped


class _AssertRewriter(ast.NodeTransformer):
    """`assert T, M` -> `try: H(i); if T: H(i, True) else: raise AssertionError(M)` /
    `except BaseException as e: H(i, e)`.

    Every assert, in functions (HumanEval's `check(candidate)`) and classes too, reports to the
    hook `H` and execution goes on after a failing or raising one. `H` is `[HOOK][0]`: a
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
        hook = ast.Subscript(ast.List([ast.Constant(HOOK)], ast.Load()), ast.Constant(0), ast.Load())
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
def compiled_tests(tests: str) -> _Compiled:
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
    names += sorted((read_names(ast.parse(facts.after)) if facts.after else set()) & facts.entry_points - set(names))
    # `double_all(...)` and `OPS[...]` depend on the solution
    kinds = assert_kinds(tree, set(names) | callers | facts.late_names, facts.shown)
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
    constant happens to match (`return False` would earn 1.0 on HumanEval/40 and /54,
    whose every assert beyond the examples expects False).

    >>> _gate(("other", "test", "example")), _gate(("other", "example"))
    ((False, False, True), (False, False))
    """
    if "test" not in kinds:
        return tuple(False for _ in kinds)
    return tuple(k == "example" for k in kinds)
