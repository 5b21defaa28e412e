"""What a code problem's prompt tells the checker: the definitions it gives (helpers the tests
trust) and the examples it shows (which pay nothing in fraction mode).

    tests = tests_with_prompt(prompt_code, tests)   # a dataset's row: the prompt's code rides along
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

The prompt's code (`prompt_code`) is its ```python blocks joined in order (a helper in one block,
the stub in the next), else its one fenced block, else the whole prompt when it is Python, else
the indented code of its prose (markdown's four-space code block) when that defines something.
The entry points are the prompt's stubs: functions whose body is only a docstring, imports,
`pass`, `...`, `raise NotImplementedError[(...)]` or `return [None]` (the `# your code here`
placeholder; HumanEval's 164 are all stubs). A prompt without a stub (a helper shown in prose, the
task named in words) has as entry points the names the tests ask that its code does not define;
where there are none either, it has no helpers: with nothing marked as the task, a function with
a body may be the one to fix.

Examples: calls of an entry point in the prompt's text (`>>> f(1)` then `2`, `f(1) ==> 2`,
`f(1) -> 2`, `f(1) should return 2`): `shown_calls` gives their arguments; an assert that calls the
candidate only on shown arguments is the prompt's own example (asserts.py leaves it out of the
fraction).

What it decides: which prompt code is trusted, which names are entry points, which calls are
shown. What it does not defend: a prompt whose helper is itself wrong (it is ground truth); an
example given in words only ("for a list of three ones it returns 3"); a stub-less prompt whose
function with a body is the task while the tests also ask another name (that function is then
trusted: the tests call the prompt's own, so a right fix of it fails and an unchanged copy is
paid only if the prompt's version already passes); a stub written another way (`return 0`,
`print("todo")`): it is a function with a body, so alone it leaves the prompt without helpers (the
solution's own `poly` is asked again) and beside another stub it is a helper the tests call
instead of the solution's; a helper given only in words or in a block of another language.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass

PROMPT_BEGIN = "# rlvr: the prompt's code (helpers the tests trust; the solution gets them too)"
PROMPT_END = "# rlvr: end of the prompt's code"


@dataclass(frozen=True)
class PromptFacts:
    helpers: str  # source of the prompt's trusted definitions ("" when none)
    helper_names: frozenset[str]  # the names they bind
    entry_points: frozenset[str]  # the prompt's stubs: what the solution must define
    shown: frozenset[str]  # shown example calls, as `call_key` of their arguments


def prompt_code(prompt: str) -> str | None:
    """The code a prompt gives: its ```python blocks in order (a helper in a first block, the stub in
    a second), else its one fenced block, else the whole prompt when it is Python, else its indented
    code in prose (markdown's code block: after a blank line, four spaces in) when that is Python
    with a def, class or import.

    >>> prompt_code("Complete it:\\n```python\\ndef f(x):\\n    pass\\n```"), prompt_code("Add two numbers.")
    ('def f(x):\\n    pass\\n', None)
    >>> prompt_code("Given\\n\\n    def g(x):\\n        return 2 * x\\n\\nwrite f(x).")
    'def g(x):\\n    return 2 * x\\n'
    """
    from rlvr.verify.code.extract import PYTHON_FENCES, code_blocks, extract_code

    python = [body for lang, body in code_blocks(prompt) if lang in PYTHON_FENCES]
    if len(python) > 1 and _parses(joined := "\n\n".join(b.rstrip() for b in python) + "\n"):
        return joined
    code = extract_code(prompt)
    if code is None:
        return prompt if _parses(prompt) else _indented_code(prompt)
    return code


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _indented_code(text: str) -> str | None:
    """The indented blocks of prose (markdown's code blocks: a blank line, then lines four spaces or
    a tab in), dedented and joined, when they are Python with a def, class or import; else None."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    blank_before = True
    for line in text.split("\n"):
        if line.strip() and line.startswith(("    ", "\t")):
            if current is None and blank_before:
                current = []
                blocks.append(current)
            if current is not None:
                current.append(line)
        elif line.strip():
            current = None
        elif current is not None:
            current.append("")
        blank_before = not line.strip()
    code = "\n\n".join(textwrap.dedent("\n".join(b)).strip("\n") for b in blocks) + "\n"
    if not blocks or not _parses(code):
        return None
    defines = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return code if any(isinstance(n, defines) for n in ast.parse(code).body) else None


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


def _is_stub(node: ast.stmt) -> bool:
    """A function to write: its body is only docstrings, imports, `pass`, `...`, `raise
    NotImplementedError` (bare, called, or with constant arguments) and `return` / `return None`
    (the `# your code here` placeholder)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return all(_is_placeholder(s) for s in node.body)


def _is_placeholder(s: ast.stmt) -> bool:
    if isinstance(s, (ast.Pass, ast.Import, ast.ImportFrom)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
        return True
    if isinstance(s, ast.Return):
        return s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None)
    if isinstance(s, ast.Raise) and s.cause is None:
        exc = s.exc
        if isinstance(exc, ast.Call) and not exc.keywords and all(isinstance(a, ast.Constant) for a in exc.args):
            exc = exc.func
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


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
    entries = frozenset(n.name for n in tree.body if _is_stub(n))
    if not entries and tests is not None:
        entries = frozenset(_asked(tests) - {name for n in tree.body for name in _bound(n)})
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
    helpers: list[ast.stmt] = []
    names: set[str] = set()
    for n in tree.body if entries else ():
        if not isinstance(n, keep) or _is_stub(n) or _bound(n) & entries:
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and not _reads(n) <= names | _BUILTINS:
            continue
        helpers.append(n)
        names |= _bound(n)
    source = "\n".join(ast.get_source_segment(prompt_code, n) or ast.unparse(n) for n in helpers)
    return PromptFacts(source, frozenset(names), entries, frozenset(shown_calls(prompt_code, entries)))


_BUILTINS = frozenset(dir(builtins))


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


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


_SEPARATOR = re.compile(r"\s*(?:==>|=>|->|➞|==|=|\bshould\s+return\b|\breturns?\b|:)?\s*")


def shown_calls(text: str, entries: frozenset[str]) -> set[str]:
    """`call_key`s of the calls of an entry point shown in `text` with an answer after them.

    >>> sorted(shown_calls(">>> f([1, 2], k=3)\\n[2]\\nf('a') ==> 'b'\\nf(x) is big", frozenset({"f"})))
    ["(('a',), ())", "(([1, 2],), (('k', 3),))"]
    """
    found: set[str] = set()
    for name in entries:
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", text):
            call, end = _balanced(text, m.end() - 1)
            if call is None:
                continue
            try:
                node = ast.parse(name + call, mode="eval").body
            except SyntaxError:
                continue
            key = call_key(node) if isinstance(node, ast.Call) else None  # the prompt's own, never run
            if key is not None and _answer_follows(text[end:]):
                found.add(key)
    return found


def _balanced(text: str, start: int) -> tuple[str | None, int]:
    depth = 0
    for i in range(start, min(len(text), start + 2000)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1], i + 1
    return None, start


def _answer_follows(rest: str) -> bool:
    """A literal answer right after a call (on its line, or the next line as doctest output)."""
    rest = rest[_SEPARATOR.match(rest).end() :] if rest.lstrip(" \t")[:1] != "\n" else rest.lstrip(" \t")[1:]
    line = rest.split("\n", 1)[0].strip().rstrip(".,;")
    for cut in range(len(line), 0, -1):
        try:
            ast.literal_eval(line[:cut].strip())
            return True
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return False


def call_key(call: ast.Call) -> str | None:
    """The arguments of a call as a value key (repr of their values: 1, 1.0 and True differ; the
    test's `[1, 0**0]` is the prompt's `[1, 1]`), None when an argument is not a constant.

    >>> call_key(ast.parse("f([1, 0**0], k=-2)").body[0].value) == call_key(ast.parse("f([1, 1], k=-2)").body[0].value)
    True
    """
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        args = tuple(_constant(a) for a in call.args)
        kwargs = tuple(sorted((k.arg, _constant(k.value)) for k in call.keywords))
    except (ValueError, TypeError, ArithmeticError, MemoryError, RecursionError):
        return None
    return repr((args, kwargs))


_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}


def _constant(node: ast.AST):
    """The value of a constant expression: literals, containers, unary and small binary arithmetic
    (`0**0`, `-1.5`, `[1] * 3`); ValueError for anything else or anything large."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_constant(e) for e in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_constant(k): _constant(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _constant(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _constant(node.left), _constant(node.right)
        if isinstance(node.op, (ast.Pow, ast.Mult)) and not all(isinstance(v, (int, float)) and abs(v) <= 64 for v in (a, b)):
            if not (isinstance(node.op, ast.Mult) and sum(isinstance(v, int) and 0 <= v <= 10_000 for v in (a, b)) >= 1):
                raise ValueError("too large to fold")
        value = _OPS[type(node.op)](a, b)
        if isinstance(value, (str, bytes, list, tuple)) and len(value) > 100_000:
            raise ValueError("too large to fold")
        return value
    raise ValueError(f"not a constant: {type(node).__name__}")
