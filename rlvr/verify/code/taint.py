"""Which asserts of a test program test the solution (`assert_kinds`): a flow-insensitive taint by
name, from the names asked of the solution (`free_names`) through everything written from them.

Which asserts depend on the solution (`_flows`): a name written from a call of it (`r = f(x)`,
`q, r = f(x)`, `head, *rest = f(x)`), a list it may have changed in place (`f(xs)`, then
`assert xs == ...`), a container a library call fills with its results (`heapq.heappush(h,
f(x))`, `bisect.insort`, `list.append(got, ...)`, `operator.setitem`, `print(f(x), file=buf)`:
each argument of a call of a function the program does not define is written from the others), a
name set under a condition, a `match` on it (flags and captures) or in a `try` that calls it (a
flag set in `except ValueError:`, `except ValueError as e: msg = str(e)`), a test function's
parameter by the argument it gets (`check(candidate, ref)`: a reference passed beside the
candidate is not the solution, so `candidate(n) == ref(n)` is no self-comparison; `map(verify,
results, xs)`: verify's parameters get the other arguments). An assert that compares the solution
with itself (`_self_comparison`) tests nothing; one that calls the solution only on arguments the
prompt shows is an example (rlvr.verify.code.examples).

What it decides: each assert's kind ("test", "example", "other"). What it does not defend: the
taint is by name and flow-insensitive, so an assert on the test's own data that shares a name with
a solution's result still counts (an argument of the solution's call is such a name too:
`candidate(n)` marks `n` everywhere, and so is an argument beside it in any library call:
`print(n, f(n))`); a dependence the names do not show (`eval` of a string, `globals()[...]`,
`setattr`, output captured with `redirect_stdout`) or a flag set in a `with` block around the call
(`contextlib.suppress`) is not followed, and such an assert is left out of the fraction.

Test: the doctests (tests/unit/verify/test_doctests.py), tests/integration/test_sandbox.py,
tests/integration/test_code_trust.py, tests/integration/test_humaneval.py.
"""

from __future__ import annotations

import ast
import builtins
import copy

from rlvr.verify.code.examples import call_key


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


def read_names(node: ast.AST) -> set[str]:
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
            flows.append(([n.name], [ast.Name(x, ast.Load()) for x in sorted(read_names(n) - params)]))
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


def assert_kinds(tree: ast.Module, asked: set[str], shown: frozenset[str]) -> dict[int, str]:
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
            if new and any(read_names(s) & tainted for s in sources):
                tainted |= new
                changed = True
    kinds: dict[int, str] = {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.Assert):
            continue
        used = read_names(n.test)
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
