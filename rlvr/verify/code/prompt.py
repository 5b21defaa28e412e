"""What a code problem's prompt tells the checker: the definitions it gives (helpers the tests
trust) and the examples it shows (which pay nothing in fraction mode).

    tests = tests_with_prompt(prompt_code, tests)   # a dataset's row: the prompt's code (prompt_text.py) rides along
    prompt_code, program = split_prompt(tests)      # the checker: the two apart again
    facts = prompt_facts(prompt_code, program)      # helpers, entry points, shown examples

A prompt such as HumanEval/32's defines `poly` and asks for `find_zero`; its test calls `poly` to
judge the answer. Asked of the solution, that `poly` is the solution's own, which can lie (return
0, or memoise what its `encode_cyclic` encoded for its `decode_cyclic`). So the tests text carries
the prompt's code between two marker lines (`tests_with_prompt`, used by every row builder: the
shipped HumanEval and user datasets), and the checker runs the prompt's *helpers* (its functions
with a body, classes, imports, constants: `prompt_facts`) in the harness before the tests, where
the solution cannot reach them, and in the solution's process before the solution (so a solution
may use them without repeating them, as HumanEval's own `exec(prompt + completion)` allows). The
tests call the prompt's own definitions whatever the solution redefines.

The prompt's code is found in its text by rlvr.verify.code.prompt_text, its shown examples read by
rlvr.verify.code.examples. The entry points are the prompt's stubs:
functions whose body is only a docstring, imports, `pass`, `...`, `raise NotImplementedError` (any
message, `from None` or not) or `return [None]` (the `# your code here` placeholder; HumanEval's 164
are all stubs). The helpers are its module-level code less the stubs and the usage examples: its
imports, functions and classes (with their decorators), and the statements it runs to build its
tables and state, whatever their kind (assignments, `+=`, `del WORKDAYS[5:]`, a method call on a
helper's value `SQUARES.add(1)`, a module's function run for its effect `random.seed(7)`,
`sys.setrecursionlimit(...)`, `bisect.insort(...)`, `warnings.warn(...)`, a comprehension run for its
effect, a call of its own function `_fill()`), and `if`, `for`, `while` and `try` blocks of these (a
version guard, a guarded import whose handler raises, a loop whose body is an `if`), when all they
run reads only builtins, earlier helpers, the entry points and names of their own (a lambda's
parameters, a comprehension's variables), the bodies of the prompt's functions they name included.
One that reads an entry point when it runs needs the solution: a def or assignment that only names
one (`OPS = {"square": square}`, `def normalize_all(items, fn=normalize)`) or reaches one through a
helper's body (`SAMPLES = [encode(w) ...]`, encode naming the stub decode in a branch) runs after
the solution in its process (`PromptFacts.solution_side`) and, in the harness, with the solution's
proxies in place; so does what reads a name it binds. A usage example calls an entry point itself
(`x = f(1)`, `print(f(1))`), or reaches one in a statement run for its effect or a block, or runs a
builtin's function for its effect (`print(...)`) or a test runner's (`doctest.testmod()`,
`unittest.main()`, `sys.exit()`), or is an assert or the `if __name__ == "__main__":` block: it
never runs. A prompt without a stub (a helper shown in prose, the task named in words) has as
entry points the names the tests ask that its code does not define; where there are none either, it
has no helpers: with nothing marked as the task, a function with a body may be the one to fix.

What it decides: which prompt code is trusted, which names are entry points. What it does not
defend: a prompt whose helper is itself wrong (it is ground truth); a stub-less prompt whose function
with a body is the task while the tests also ask another name (that function is then trusted: the
tests call the prompt's own, so a right fix of it fails and an unchanged copy is paid only if the
prompt's version already passes); a stub written another way (`return 0`, `return ...`, `assert
False`, `print("todo")`): it is a function with a body, so alone it leaves the prompt without
helpers (the solution's own `poly` is asked again) and beside another stub it is a helper the tests
call instead of the solution's; a real helper whose body is only `return None` (taken for a stub:
neither side gets it); a usage example that reads no entry point (`y = poly([1], 2)`) runs as a
helper does, before the tests; a table filled by a
builtin's call run for its effect (`list(map(SQUARES.add, ...))`) or in a `with` or `match` block:
that statement is left out, so the tests see the table as the statements before it left it (empty);
a read the names do not show (`globals()['f']` in a helper's body) is not followed, so a call of
that helper may run before the solution and fail; a helper statement that needs the solution runs in
the harness before the tests; a helper that names a stub (`def primes_upto(n, test=is_prime)`) is
defined only after the solution, so the solution's module-level code cannot call it (`PRIMES =
primes_upto(1000, is_prime)` fails at startup, though `exec(prompt + completion)` runs it); a stub's
decorators are dropped with it, so a registry they fill (`@register def square`) stays empty in the
tests' process; a helper statement that needs the solution runs in
the harness before the tests, so a solution that breaks it (its stub raising for the helper's call)
fails at startup, and one whose helper names the stub only in a branch the tests never take still
makes the asserts on it tests of the solution (instrument._callers: a sanity assert on the prompt's
`encode` counts in the fraction); a class whose methods are all stubs is a helper,
so tests that build it (`Counter()`) get the prompt's empty class (an instance of the solution's
could not cross to the tests' process: rlvr.verify.code.harness).

Test: the doctests (tests/unit/verify/test_doctests.py), tests/integration/test_code_trust.py,
tests/integration/test_redteam.py, tests/integration/test_humaneval.py.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from rlvr.verify.code.examples import shown_calls

PROMPT_BEGIN = "# rlvr: the prompt's code (helpers the tests trust; the solution gets them too)"
PROMPT_END = "# rlvr: end of the prompt's code"
AFTER_SOLUTION = "# rlvr: the prompt's code that needs the solution, run after it"


@dataclass(frozen=True)
class PromptFacts:
    helpers: str  # source of the prompt's trusted definitions ("" when none)
    helper_names: frozenset[str]  # the names they bind
    entry_points: frozenset[str]  # the prompt's stubs: what the solution must define
    shown: frozenset[str]  # shown example calls, as `call_key` of their arguments
    after: str = (
        ""  # of `helpers`, what needs the solution (reads an entry point when run): its process runs it after the solution
    )
    late_names: frozenset[str] = frozenset()  # the names those bind (`OPS = {"square": square}`)
    before: str = ""  # of `helpers`, the rest (when `after` is not empty)

    @property
    def solution_side(self) -> str:
        """The helpers as the solution's process runs them: those that need no solution, AFTER_SOLUTION, the rest."""
        if not self.after:
            return self.helpers
        return f"{self.before}\n{AFTER_SOLUTION}\n{self.after}"


def tests_with_prompt(prompt_code: str | None, tests: str) -> str:
    """The tests text with the prompt's code in front, between PROMPT_BEGIN and PROMPT_END; `tests`
    unchanged when there is no prompt code, it is not Python or has no entry point (a stub, or a name
    the tests ask that the prompt's code does not define: prompt_facts), or the tests are
    stdin/stdout cases (JSON).

    >>> tests_with_prompt("def f(x):\\n    '''f(1) -> 2'''\\n", "assert f(1) == 2").splitlines()[1:3]
    ['def f(x):', "    '''f(1) -> 2'''"]
    """
    if not prompt_code or PROMPT_BEGIN in tests or tests.lstrip().startswith("{"):
        return tests
    if not prompt_facts(prompt_code, tests).entry_points:
        return tests
    return f"{PROMPT_BEGIN}\n{prompt_code.rstrip()}\n{PROMPT_END}\n{tests}"


def split_prompt(tests: str) -> tuple[str, str]:
    """(the prompt's code, the test program) from a tests text; the prompt's lines are blank in the
    test program, so its line numbers are the stored text's.

    >>> split_prompt(PROMPT_BEGIN + "\\nimport math\\n" + PROMPT_END + "\\nassert 1")
    ('import math', '\\n\\n\\nassert 1')
    """
    lines = tests.split("\n")
    if not lines or lines[0] != PROMPT_BEGIN or PROMPT_END not in lines:
        return "", tests
    end = lines.index(PROMPT_END)
    return "\n".join(lines[1:end]), "\n" * (end + 1) + "\n".join(lines[end + 1 :])


def is_stub(node: ast.stmt) -> bool:
    """A function to write: its body is only docstrings, imports, `pass`, `...`, `raise
    NotImplementedError` (bare or called with any message, `from None` or not) and `return` / `return None`
    (the `# your code here` placeholder)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return all(_is_placeholder(s) for s in node.body)


def _is_placeholder(s: ast.stmt) -> bool:
    if isinstance(s, (ast.Pass, ast.Import, ast.ImportFrom)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
        return True
    if isinstance(s, ast.Return):
        return s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None)
    if isinstance(s, ast.Raise) and (s.cause is None or isinstance(s.cause, ast.Constant)):  # `from None`
        exc = s.exc.func if isinstance(s.exc, ast.Call) else s.exc  # any message: f-string, 'a' + 'b', ...
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _bound(node: ast.AST) -> set[str]:
    """The names a statement binds: a definition's or import's name, an assignment's targets, and in
    `if`/`for`/`while`/`try` blocks what their statements bind (`from math import isqrt` under an `if`).

    >>> sorted(_bound(ast.parse("if X:\\n    from math import isqrt\\nelse:\\n    def isqrt(n):\\n        r = 1").body[0]))
    ['isqrt']
    """
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    names = {node.name} if isinstance(node, ast.ExceptHandler) and node.name else set()
    for value in (v for _, field in ast.iter_fields(node) for v in (field if isinstance(field, list) else [field])):
        if isinstance(value, (ast.stmt, ast.excepthandler)):
            names |= _bound(value)
        elif isinstance(value, ast.AST):
            names |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def prompt_facts(prompt_code: str, tests: str | None = None) -> PromptFacts:
    """The prompt's helpers (top-level imports, classes, functions with a body, assignments, in
    order), its entry points and its shown example calls. Code that is not Python has none.

    The entry points are its stubs. With no stub (a helper shown in prose, the task named in words),
    they are the names `tests` asks (reads and never binds) that the prompt's code does not define;
    with neither there are no helpers: nothing says which function is the task, and one with a body
    may be the one to fix. An assignment is a helper only when every name it reads is a builtin or
    an earlier helper's (`x = find_zero([1, 2])`, a usage example, cannot run before the solution).

    >>> f = prompt_facts("import math\\ndef poly(xs, x):\\n    return 0\\ndef find_zero(xs):\\n    '''>>> find_zero([1, 2])\\n    -0.5'''\\n")
    >>> sorted(f.helper_names), sorted(f.entry_points), len(f.shown)
    (['math', 'poly'], ['find_zero'], 1)
    >>> f = prompt_facts("def poly(xs, x):\\n    return 0\\nr = find_zero([1])\\n", "assert poly([1], find_zero([1])) == 0")
    >>> sorted(f.helper_names), sorted(f.entry_points)
    (['poly'], ['find_zero'])
    """
    try:
        tree = ast.parse(prompt_code)
    except (SyntaxError, ValueError):
        return PromptFacts("", frozenset(), frozenset(), frozenset())
    entries = frozenset(n.name for n in tree.body if is_stub(n))
    if not entries and tests is not None:
        entries = frozenset(_asked(tests) - {name for n in tree.body for name in _bound(n)})
    helpers: list[ast.stmt] = []
    late: list[ast.stmt] = []
    names: set[str] = set()
    late_names: set[str] = set()
    modules = {
        name: _module(n, name) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for name in _bound(n)
    }
    calls: dict[str, set[str]] = {}  # what each helper function reads of the module (`module_reads`)
    for n in tree.body if entries else ():
        if is_stub(n) or _bound(n) & entries or not _helper(n, names | entries, modules, calls):
            continue
        reads = _definition_reads(n, calls) if isinstance(n, _DEFINITIONS) else _free(n, calls)
        if reads & (entries | late_names):  # needs the solution: run after it, unless it calls a stub itself (a usage example)
            if not isinstance(n, (*_DEFINITIONS, ast.Assign, ast.AnnAssign)) or _calls(n, entries):
                continue
            late.append(n)
            late_names |= _bound(n)
        helpers.append(n)
        names |= _bound(n)
        for name, found in module_reads(n).items():
            calls[name] = calls.get(name, set()) | found
    source = "\n".join(_source(prompt_code, n) for n in helpers)
    params = {
        n.name: [a.arg for a in (*n.args.posonlyargs, *n.args.args)]
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in entries
    }
    shown = frozenset(shown_calls(prompt_code, entries, params))
    if not late:
        return PromptFacts(source, frozenset(names), entries, shown)
    after = "\n".join(_source(prompt_code, n) for n in late)
    before = "\n".join(_source(prompt_code, n) for n in helpers if n not in late)
    return PromptFacts(source, frozenset(names), entries, shown, after, frozenset(late_names), before)


_NOT_RUN = frozenset({"doctest", "unittest", "pytest"})  # a module whose calls run tests, not the prompt's tables


def _module(node: ast.Import | ast.ImportFrom, name: str) -> str:
    """The top-level module an import binds `name` from (`import unittest as ut`: 'unittest')."""
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0]
    return next(((a.name.split(".")[0]) for a in node.names if (a.asname or a.name).split(".")[0] == name), name)


def _calls(node: ast.AST, entries: frozenset[str]) -> bool:
    """Whether a statement calls an entry point itself, outside the bodies of the functions it defines
    (`x = f(1)`, a usage example), as opposed to naming one (`OPS = {"f": f}`, `def g(fn=f)`)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in entries:
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += [*n.decorator_list, *n.args.defaults, *(d for d in n.args.kw_defaults if d)]
        elif not isinstance(n, ast.Lambda):
            todo += list(ast.iter_child_nodes(n))
    return False


def _definition_reads(node: ast.stmt, calls: dict[str, set[str]]) -> set[str]:
    """What a def, class or import reads of the module when it runs (not when its functions are
    called): decorators, defaults, annotations, a class's bases and body (and what the prompt's
    functions it calls there read)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return set()
    parts: list[ast.AST] = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        parts += [*node.bases, *node.keywords]
        parts += node.body  # it runs: its statements, and its methods' decorators and defaults
        return (
            set().union(*(_definition_reads(p, calls) if isinstance(p, _DEFINITIONS) else _free(p, calls) for p in parts))
            if parts
            else set()
        )
    a = node.args
    parts += [*a.defaults, *(d for d in a.kw_defaults if d)]
    parts += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None and x.annotation]
    if node.returns is not None:
        parts.append(node.returns)
    return set().union(*(_free(p, calls) for p in parts)) if parts else set()


_BUILTINS = frozenset(dir(builtins))


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


_BLOCKS = (ast.If, ast.For, ast.While, ast.Try, ast.TryStar)


def _block_statements(node: ast.stmt) -> list[ast.stmt]:
    """The statements of an `if`, `for`, `while` or `try` block: its body, `else`, `finally` and handlers."""
    blocks = [node.body, node.orelse, getattr(node, "finalbody", []), *(h.body for h in getattr(node, "handlers", []))]
    return [s for b in blocks for s in b]


def _helper(node: ast.stmt, names: set[str], modules: dict[str, str], calls: dict[str, set[str]]) -> bool:
    """Whether a top-level statement of the prompt is a helper, given the helper names before it and
    what each helper function reads of the module (`calls`, `module_reads`): a statement the prompt runs
    to build its helpers, which may therefore run before the solution. Imports, functions and
    classes (decorated or not: their bodies do not run) are; so are the statements that fill its
    tables, whatever their kind (assignments, `+=`, a method of a helper's value `SQUARES.add(1)`, a
    comprehension run for its effect, a call of the prompt's own function `_fill()`) and `if`,
    `for`, `while` and `try` blocks of these (a version guard, `if hasattr(math, "isqrt"):`, a loop
    whose body is an `if`), when all they run reads only builtins, earlier helpers and names of
    their own (a lambda's parameters, a comprehension's or loop's variables), the bodies of the
    prompt's functions they name included. A usage example, which reads the entry point directly
    (`print(f(1))`, `x = f(1)`) or through a helper (`double_all([1])` calling the stub `double`),
    is none here when `names` holds no entry point (prompt_facts passes them, then sorts out what
    needs the solution); nor is a call of a builtin for its effect (`print(...)`), a test runner's
    (`doctest.testmod()`, `unittest.main()`, `sys.exit()`), an assert, or the prompt's
    `if __name__ == "__main__":` block. A module's function run for its effect (`random.seed(7)`),
    a `del` and, in a block, a `raise` are."""
    if isinstance(node, _DEFINITIONS):
        return True
    if isinstance(node, ast.If) and "__name__" in _reads(node.test):
        return False
    own = names | _bound(node)
    if isinstance(node, _BLOCKS):
        if isinstance(node, (ast.If, ast.While)):
            heads: list[ast.AST] = [node.test]
        elif isinstance(node, ast.For):
            heads = [node.target, node.iter]
        else:
            heads = [h.type for h in node.handlers if h.type is not None]
        inner = all(
            isinstance(s, (ast.Pass, ast.Break, ast.Continue))
            or (isinstance(s, ast.Raise) and _free(s, calls) <= own | _BUILTINS)  # `except ImportError: raise SystemExit(...)`
            or _helper(s, own, modules, calls)
            for s in _block_statements(node)
        )
        return inner and all(_free(h, calls) <= own | _BUILTINS for h in heads)
    if isinstance(node, ast.Expr):  # run for its effect on a helper, not `print(...)`, `doctest.testmod()` or a docstring
        func = node.value.func if isinstance(node.value, ast.Call) else None
        if isinstance(node.value, ast.Constant) or (isinstance(func, ast.Name) and func.id not in names):
            return False
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if (
            isinstance(root, ast.Name)
            and root.id in modules
            and (modules[root.id] in _NOT_RUN or ast.unparse(func) in ("sys.exit", "os._exit", "os.abort"))
        ):
            return False  # `doctest.testmod()`, `unittest.main()`: a run of tests, not the prompt's state
    elif not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete)) or (
        isinstance(node, ast.AnnAssign) and node.value is None
    ):
        return False
    return _free(node, calls) <= names | _BUILTINS


def _free(node: ast.AST, calls: dict[str, set[str]] | None = None) -> set[str]:
    """The names a statement reads that it does not bind itself: a lambda's parameters, a
    comprehension's variables and a loop's names are its own (`+=` reads its target); and what the
    prompt's functions it names read of the module (`calls`), since it may call them."""
    own: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Lambda):
            a = n.args
            own |= {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
        elif isinstance(n, ast.comprehension):
            own |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
        elif isinstance(n, ast.For):
            own |= {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
    target = {node.target.id} if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) else set()
    free = (_reads(node) - own) | target
    todo, seen = [n for n in free if calls and n in calls], set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            free |= calls[name]
            todo += [m for m in calls[name] if m in calls]
    return free


def module_reads(node: ast.stmt) -> dict[str, set[str]]:
    """What each function or class a helper statement defines (at its top, or in its `if`/`try`
    blocks) reads of the module when it runs: the names its body reads and binds nowhere inside
    (parameters, assignments, nested definitions and imports are its own; `global X` reads X).

    >>> sorted(module_reads(ast.parse("def _fill():\\n    for i in range(3):\\n        SQUARES.add(i * i)").body[0])["_fill"])
    ['SQUARES', 'range']
    """
    if isinstance(node, _BLOCKS):
        found: dict[str, set[str]] = {}
        for s in _block_statements(node):
            for name, reads in module_reads(s).items():
                found[name] = found.get(name, set()) | reads
        return found
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {}
    local: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            local.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            local.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            local |= _bound(n)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            local.add(n.name)
    declared = {name for n in ast.walk(node) if isinstance(n, ast.Global) for name in n.names}
    return {node.name: _reads(node) - (local - declared)}


def _source(code: str, node: ast.stmt) -> str:
    """A statement's source, with its decorators (`ast.get_source_segment` starts at `def`/`class`)."""
    text = ast.get_source_segment(code, node) or ast.unparse(node)
    decorators = getattr(node, "decorator_list", [])
    return "".join(f"@{ast.get_source_segment(code, d) or ast.unparse(d)}\n" for d in decorators) + text


def _asked(tests: str) -> set[str]:
    """The names a test program reads and never binds, builtins aside: what it asks of the solution."""
    try:
        tree = ast.parse(tests)
    except (SyntaxError, ValueError):
        return set()
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Name)):
            bound |= _bound(n)
    return _reads(tree) - bound - _BUILTINS
