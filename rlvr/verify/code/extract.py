"""Response parsing for the code tier: which part of a model's response is the program.

What it decides: the code block to run (the last ```python block, else the last fenced block),
dedented as a whole (a block under a markdown list item). A fence is three backticks or three tildes
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


def extract_code(response: str) -> str | None:
    """The last ```python block of a model response, else the last fenced block, else None.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```")
    'print(1)\\n'
    >>> extract_code("no code") is None
    True
    """
    blocks = code_blocks(response)
    python = [body for lang, body in blocks if lang in PYTHON_FENCES]
    if python:
        return python[-1]
    return blocks[-1][1] if blocks else None
