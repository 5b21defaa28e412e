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

The prompt's code (`prompt_code`) is its fenced Python (```python, ```py3 or ~~~python blocks, and
unlabelled ones that parse and define something, a table `PRIMES: list = [...]` too) and the code of
its prose (indented blocks, and runs of lines at the margin that parse and define something: "Given
the helper" then `def poly` unfenced), joined in the order of the text (a helper in one block, the
stub in the next; a block's `>>>` transcripts, which do not parse, left out: a block of examples
alone is empty), else its last fenced block, else the whole prompt when it is Python, else its
indented code (markdown's four-space code block) when that defines something, else its runs of lines
that are Python with a def, class or import, joined, when there are two or more (a helper, a line of
prose, the stub), else the longest such run with a def (the instruct format: "Complete the following
Python function." before or after HumanEval's code). The entry points are the prompt's stubs:
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

Examples: calls of an entry point in the prompt's text (`>>> f(1)` then `2`, an answer wrapped over
the next lines, `f(1) ==> 2`, `f(1) -> 2`, `f(1) → 2`, `f(1)  # => 2`, `f(1)  # returns 2`, `f(1)
should return 2`, `f(1) should be 2`, `f(1) gives 2`, `f(1)  # Output: 2`, `print(f(1))  # Output: 2`,
`` `f(1)` returns `2` ``, LeetCode's `Input: x = 1` then `Output: 2` for a prompt with one stub; a
call by keyword, `>>> f(x=1)`, is also the positional call `f(1)`): `shown_calls` gives their arguments; an assert that calls the candidate only on shown arguments
is the prompt's own example (asserts.py leaves it out of the fraction, and a solution failing one
earns 0). Such a line in the prompt's prose, outside its code (`bigger(2, 3) -> 3` above the
```python block), rides along with the code as a comment (`prompt_code`), so the checker reads it too.

What it decides: which prompt code is trusted, which names are entry points, which calls are shown.
What it does not defend: a prompt whose helper is itself wrong (it is ground truth); an example
given in words only ("for a list of three ones it returns 3") or with a verb not read (`f(1) is 2`,
`f(1) yields 2`); a stub-less prompt whose function
with a body is the task while the tests also ask another name (that function is then trusted: the
tests call the prompt's own, so a right fix of it fails and an unchanged copy is paid only if the
prompt's version already passes); a stub written another way (`return 0`, `return ...`, `assert
False`, `print("todo")`): it is a function with a body, so alone it leaves the prompt without
helpers (the solution's own `poly` is asked again) and beside another stub it is a helper the tests
call instead of the solution's; a real helper whose body is only `return None` (taken for a stub:
neither side gets it); a helper given only in words or in a block of another language; a usage
example that reads no entry point (`y = poly([1], 2)`) runs as a helper does, before the tests; the
prompt's `>>>` examples in a block of their own, and a prose example whose answer is on the next line,
are not read as shown calls; a table filled by a
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
makes the asserts on it tests of the solution (asserts._callers: a sanity assert on the prompt's
`encode` counts in the fraction); a class whose methods are all stubs is a helper,
so tests that build it (`Counter()`) get the prompt's empty class (an instance of the solution's
could not cross to the tests' process: harness.py).
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass

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


def prompt_code(prompt: str) -> str | None:
    """The code a prompt gives: its fenced blocks that are Python (``` or ~~~ fences labelled python,
    py, python3 or py3, or unlabelled and defining something, and parsing once their `>>>`
    transcripts are left out) and the indented code of its prose (markdown's code block: after a
    blank line, four spaces in, with a def, class or import), joined in the order of the text (a
    helper in a first block, the stub in a second; a block of `>>>` examples alone left out), and the
    runs of its prose's lines at the margin that parse and define something ("Given the helper" then
    an unfenced `def poly`); else the last fenced block; else the whole prompt when it is Python; else
    its indented code; else its runs of lines that are Python and define something, joined, when
    there are two or more (a helper, "Complete the following function.", the stub); else the longest
    run of its lines that is Python with a def (the instruct format: an instruction then the code).

    >>> prompt_code("Complete it:\\n```python\\ndef f(x):\\n    pass\\n```"), prompt_code("Add two numbers.")
    ('def f(x):\\n    pass\\n', None)
    >>> prompt_code("Given\\n\\n    def g(x):\\n        return 2 * x\\n\\nwrite f(x).")
    'def g(x):\\n    return 2 * x\\n'
    >>> prompt_code("Complete the following Python function.\\n\\ndef f(x):\\n    \'\'\'Twice x.\'\'\'\\n\\nThen stop.")
    "def f(x):\\n    \'\'\'Twice x.\'\'\'\\n"
    """
    code = _prompt_code(prompt)
    return code if code is None else _with_prose_examples(prompt, code)


_EXAMPLES = "# rlvr: the examples the prompt's text shows outside its code"


_LEETCODE = re.compile(r"^[ \t]*\**Input\**:\**[ \t]*([^\n]+)\n(?:[ \t]*\n)?[ \t]*\**Output\**:\**[ \t]*([^\n]+)$", re.M)


def _with_prose_examples(prompt: str, code: str) -> str:
    """`code` with, after it as comments, the lines of the prompt's text outside it that show a call of
    one of its functions with the answer on the same line (`bigger(2, 3) -> 3` in the prose above a
    ```python block, `` `bigger(2, 3)` returns `3` ``, `bigger(2, 3) should be 3`), and LeetCode's
    examples of its one stub (`Input: a = 2, b = 3` then `Output: 3`, carried as `bigger(a = 2, b =
    3) -> 3`): shown calls (`shown_calls`) the tests text then carries with the code.

    >>> _with_prose_examples("bigger(2, 3) -> 3\\n\\n```python\\ndef bigger(a, b):\\n    pass\\n```", "def bigger(a, b):\\n    pass\\n").splitlines()[-1]
    '# bigger(2, 3) -> 3'
    """
    try:
        names = frozenset(n.name for n in ast.parse(code).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    except (SyntaxError, ValueError):
        return code
    inside = {line.strip() for line in code.split("\n")}
    shown = [
        line.strip()
        for line in prompt.split("\n")[:2000]
        if line.strip() not in inside and any(n + "(" in line for n in names) and shown_calls(line.strip(), names)
    ]
    stubs = [n.name for n in ast.parse(code).body if _is_stub(n)]
    if len(stubs) == 1:  # LeetCode's "Input: n = 123" then "Output: 6": the call of the one stub they show
        for m in _LEETCODE.finditer(prompt[:200_000]):
            line = f"{stubs[0]}({m.group(1).strip()}) -> {m.group(2).strip()}"
            if shown_calls(line, frozenset(stubs)):
                shown.append(line)
    return code if not shown else code.rstrip("\n") + "\n\n" + "\n".join([_EXAMPLES, *("# " + s for s in shown)]) + "\n"


def _prompt_code(prompt: str) -> str | None:
    from rlvr.verify.code.extract import _FENCE, PYTHON_FENCES, extract_code

    pieces: list[tuple[int, str]] = []
    for m in _FENCE.finditer(prompt):
        lang, body = m["lang"].lower(), _without_transcripts(textwrap.dedent(m["body"]))
        if (lang in PYTHON_FENCES or (not lang and _defines(body, ast.Assign, ast.AnnAssign))) and body.strip() and _parses(body):
            pieces.append((m.start(), body))
    if pieces:
        prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), prompt)  # the same line numbers
        runs = [(start, end, code) for start, end, code in _code_runs(prose, margin=True) if _defines(code)]
        pieces += [(_offset(prompt, start), code) for start, _, code in runs]
        pieces += [
            (_offset(prompt, line), body)
            for line, body in _defining_blocks(prose)
            if not any(start <= line < end for start, end, _ in runs)  # a def's own body, not a block of prose
        ]
        joined = "\n\n".join(body.strip("\n") for _, body in sorted(pieces)) + "\n"
        if _parses(joined):
            return joined
    code = extract_code(prompt)
    if code is not None:
        return code
    if _parses(prompt):
        return prompt
    return _indented_code(prompt) or _joined_runs(prompt) or _longest_run(prompt)


_OPENER = r"(?:(?:async\s+)?def\s|class\s|import\s|from\s|@|[A-Za-z_][\w.]*\s*(?::[^=]*)?=[^=])"


def _code_runs(text: str, margin: bool = False) -> list[tuple[int, int, str]]:
    """(first line, line after the last, dedented code) of each run of `text`'s lines that parses as
    Python, in order: from a line that opens a statement (def, class, import, a decorator, an
    assignment; at the margin only when `margin`), the longest run that parses; the next is looked
    for after it. Prose lines between runs (an instruction) belong to none.

    >>> [code for _, _, code in _code_runs("Use:\\nimport math\\n\\nThen:\\ndef f(x):\\n    pass\\n")]
    ['import math\\n', 'def f(x):\\n    pass\\n']
    """
    lines = text.split("\n")[:2000]
    opener = re.compile(_OPENER if margin else r"\s*" + _OPENER)
    runs: list[tuple[int, int, str]] = []
    start = 0
    while start < len(lines):
        found = None
        if opener.match(lines[start]):
            for end in range(len(lines), start, -1):
                if not lines[end - 1].strip():  # the same code as the run a line shorter
                    continue
                code = textwrap.dedent("\n".join(lines[start:end])).strip("\n") + "\n"
                if _parses(code):
                    found = end
                    runs.append((start, end, code))
                    break
        start = found or start + 1
    return runs


def _joined_runs(text: str) -> str | None:
    """The runs of `text`'s lines that are Python with a def, class or import (`_code_runs`), joined in
    order, when there are two or more and the whole parses (a helper, an instruction line, then the
    stub); else None."""
    runs = [code for _, _, code in _code_runs(text) if _defines(code)]
    if len(runs) < 2:
        return None
    joined = "\n\n".join(code.strip("\n") for code in runs) + "\n"
    return joined if _parses(joined) else None


def _without_transcripts(block: str) -> str:
    """A block of code less its interpreter transcripts: a `>>>` line at the block's margin, the `...`
    lines after it and its output (the lines up to a blank line or the next `>>>`), when the block
    does not parse with them (a helper followed by `>>> poly([1, 2], 3)` and `7.0`); a block of
    examples alone becomes empty. A block that parses (a `>>>` inside a docstring) is unchanged.

    >>> _without_transcripts("def g(x):\\n    return 2 * x\\n\\n>>> g(2)\\n4\\n")
    'def g(x):\\n    return 2 * x\\n\\n'
    """
    if _parses(block) or ">>>" not in block:
        return block
    kept: list[str] = []
    output = False
    for line in block.split("\n"):
        if line.startswith(">>>") or (output and line.startswith("...")):
            output = True
        elif not line.strip():
            output = False
            kept.append(line)
        elif not output:
            kept.append(line)
    return "\n".join(kept)


def _offset(text: str, line: int) -> int:
    return sum(len(x) + 1 for x in text.split("\n")[:line])


def _longest_run(text: str) -> str | None:
    """The longest run of `text`'s lines (dedented) that parses as Python and defines a function or
    class, starting at a line that opens a statement (def, class, import, a decorator, an
    assignment); None when there is none."""
    lines = text.split("\n")[:2000]
    opener = re.compile(r"\s*(?:(?:async\s+)?def\s|class\s|import\s|from\s|@|[A-Za-z_][\w.]*\s*(?::[^=]*)?=[^=])")
    best: tuple[int, str] | None = None
    for start, line in enumerate(lines):
        if not opener.match(line) or (best is not None and start < best[0]):
            continue
        for end in range(len(lines), start, -1):
            code = textwrap.dedent("\n".join(lines[start:end])).strip("\n") + "\n"
            if not code.strip() or not _parses(code):
                continue
            tree = ast.parse(code)
            if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body):
                if best is None or len(code) > len(best[1]):
                    best = (end, code)
            break
    return best[1] if best else None


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _indented_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, dedented code) of each indented block of prose (markdown's code block: a blank
    line, then lines four spaces or a tab in)."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    blank_before = True
    for i, line in enumerate(text.split("\n")):
        if line.strip() and line.startswith(("    ", "\t")):
            if current is None and blank_before:
                current = []
                blocks.append((i, current))
            if current is not None:
                current.append(line)
        elif line.strip():
            current = None
        elif current is not None:
            current.append("")
        blank_before = not line.strip()
    return [(i, textwrap.dedent("\n".join(b)).strip("\n")) for i, b in blocks]


_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _indented_code(text: str) -> str | None:
    """The indented blocks of prose, joined, when they are Python with a def, class or import; else None."""
    blocks = _indented_blocks(text)
    code = "\n\n".join(b for _, b in blocks) + "\n"
    if not blocks or not _parses(code):
        return None
    return code if any(isinstance(n, _DEFINES) for n in ast.parse(code).body) else None


def _defines(code: str, *also: type) -> bool:
    """Whether `code` is Python with a top-level def, class or import (or one of `also`)."""
    return _parses(code) and any(isinstance(n, (*_DEFINES, *also)) for n in ast.parse(code).body)


def _defining_blocks(text: str) -> list[tuple[int, str]]:
    """The indented blocks of prose that are Python with a def, class or import (beside a fence)."""
    return [(i, b) for i, b in _indented_blocks(text) if _defines(b)]


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
    entries = frozenset(n.name for n in tree.body if _is_stub(n))
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
        if _is_stub(n) or _bound(n) & entries or not _helper(n, names | entries, modules, calls):
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


_SEPARATOR = re.compile(
    r"`?\s*(?:#\s*)?(?:==>|=>|->|➞|→|==|=|\bshould\s+(?:return|be)\b|\breturns?\b|\bgives\b|(?i:output|result)\s*:|:)?\s*`?"
)


def shown_calls(text: str, entries: frozenset[str], params: dict[str, list[str]] | None = None) -> set[str]:
    """`call_key`s of the calls of an entry point shown in `text` with an answer after them (with
    `params`, each entry point's positional parameters, a call by keyword is also shown as the
    positional call it is: `>>> f(n=123)`).

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
            if text[max(0, m.start() - 6) : m.start()] == "print(" and text[end : end + 1] == ")":
                end += 1  # `print(f(1))  # Output: 2`
            if key is not None and _answer_follows(text[end:]):
                found.add(key)
                positional = _positional(node, (params or {}).get(name))
                if positional is not None:
                    found.add(positional)
    return found


def _positional(call: ast.Call, params: list[str] | None) -> str | None:
    """The call_key of a call whose keywords name the stub's next positional parameters in order
    (`f(n=123)` shown, `f(123)` tested), as the positional call it is; else None."""
    if not call.keywords or not params or any(k.arg is None for k in call.keywords):
        return None
    rest = params[len(call.args) :]
    by_name = {k.arg: k.value for k in call.keywords}
    if sorted(by_name) != sorted(rest[: len(by_name)]):
        return None
    return call_key(ast.Call(call.func, [*call.args, *(by_name[p] for p in rest[: len(by_name)])], []))


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
    lines = rest.split("\n", 20)
    line = lines[0].strip().rstrip(".,;")
    for cut in range(len(line), 0, -1):
        try:
            ast.literal_eval(line[:cut].strip())
            return True
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    if line[:1] in "[({":  # an answer that goes on over the next lines (doctest output wrapped)
        for end in range(2, len(lines) + 1):
            text = "\n".join(lines[:end]).strip()
            if not lines[end - 1].strip() or ">>>" in lines[end - 1]:
                break
            try:
                ast.literal_eval(text.rstrip(".,;"))
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
