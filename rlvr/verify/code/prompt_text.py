"""The code a code problem's prompt gives, found in its text (`prompt_code`): what
rlvr.verify.code.prompt then reads for helpers, entry points and shown examples.

    code = prompt_code(prompt)   # None when the prompt holds no Python

The prompt's code is its fenced Python (```python, ```py3 or ~~~python blocks, and unlabelled ones
that parse and define something, a table `PRIMES: list = [...]` too) and the code of its prose
(indented blocks, and runs of lines at the margin that parse and define something: "Given the
helper" then `def poly` unfenced), joined in the order of the text (a helper in one block, the stub
in the next; a block's `>>>` transcripts, which do not parse, left out: a block of examples alone is
empty), else its last fenced block, else the whole prompt when it is Python, else its indented code
(markdown's four-space code block) when that defines something, else its runs of lines that are
Python with a def, class or import, joined, when there are two or more (a helper, a line of prose,
the stub), else the longest such run with a def (the instruct format: "Complete the following
Python function." before or after HumanEval's code). A line of the prompt's prose, outside its code,
that shows a call with its answer (`bigger(2, 3) -> 3` above the ```python block) rides along with
the code as a comment, so the checker reads it too (rlvr.verify.code.examples).

What it decides: which text of the prompt is its code. What it does not defend: a helper given only
in words or in a block of another language; the prompt's `>>>` examples in a block of their own are
not read as shown calls.

Test: the doctests (tests/unit/verify/test_doctests.py), tests/integration/test_code_trust.py,
tests/integration/test_redteam.py.
"""

from __future__ import annotations

import ast
import re
import textwrap

from rlvr.verify.code.examples import shown_calls
from rlvr.verify.code.prompt import is_stub


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
    stubs = [n.name for n in ast.parse(code).body if is_stub(n)]
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
