"""Response parsing for the code tier: which part of a model's response is the program.

What it decides: the code block to run: of the ```python blocks (else of all fenced blocks), the
last that defines the entry point at its top level (the dataset's own `entry_point`; without one,
a name the tests use), else the last block, so an "example usage" block after the solution is not
what runs. Blocks are dedented as a whole (a block under a markdown list item). A fence is three backticks or three tildes
(markdown's ~~~ fence), closed by the same; a Python block is labelled python, py, python3 or py3.
What it does not defend: nothing here runs code; a response with no block is scored 0 by the
caller with the reason `no_code`.
"""

from __future__ import annotations

import re
import textwrap

# an opening fence (``` or ~~~) starts a line (prose may mention ```python inline); the body ends at
# the next fence of the same kind
_FENCE = re.compile(r"^[ \t]*(?P<fence>```|~~~)[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)(?P=fence)", re.DOTALL | re.MULTILINE)


PYTHON_FENCES = ("python", "py", "python3", "py3")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of `text`, in order; the language lower-cased, the body
    dedented (a block under a markdown list item is indented as a whole).

    >>> code_blocks("1. Add:\\n\\n   ```python\\n   def f():\\n       return 1\\n   ```\\n"), code_blocks("~~~py3\\nx = 1\\n~~~")
    ([('python', 'def f():\\n    return 1\\n')], [('py3', 'x = 1\\n')])
    """
    return [(m["lang"].lower(), textwrap.dedent(m["body"])) for m in _FENCE.finditer(text)]


_DEFINES = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)  # at the top level only


def defined_names(code: str) -> set[str]:
    """The functions and classes `code` defines at its top level.

    >>> sorted(defined_names("def f(x):\\n    def g(): pass\\nclass C:\\n    pass\\nasync def h(): pass\\n"))
    ['C', 'f', 'h']
    """
    return set(_DEFINES.findall(code))


def extract_code(response: str, *, entry_point: str | None = None, tests: str | None = None) -> str | None:
    """The block of a model response to run (module docstring), else None.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```")
    'print(1)\\n'
    >>> extract_code("no code") is None
    True
    >>> extract_code("```python\\ndef f():\\n    return 1\\n```\\nUsage:\\n```python\\nassert f() == 2\\n```", entry_point="f")
    'def f():\\n    return 1\\n'
    """
    blocks = code_blocks(response)
    bodies = [body for lang, body in blocks if lang in PYTHON_FENCES] or [body for _, body in blocks]
    if not bodies:
        return None
    if entry_point:
        wanted = {entry_point}
    elif tests:
        wanted = {n for b in bodies for n in defined_names(b) if re.search(rf"\b{re.escape(n)}\b", tests)}
    else:
        wanted = set()
    defining = [b for b in bodies if defined_names(b) & wanted]
    return (defining or bodies)[-1]
