"""The examples a code prompt shows: calls of an entry point in the prompt's text with their
answer, which pay nothing in fraction mode.

    shown_calls(">>> f(1)\n2", frozenset({"f"}))   # {call_key of f(1)}

Read forms: `>>> f(1)` then `2` (an answer wrapped over the next lines too), `f(1) ==> 2`, `f(1) ->
2`, `f(1) → 2`, `f(1)  # => 2`, `f(1)  # returns 2`, `f(1) should return 2`, `f(1) should be 2`,
`f(1) gives 2`, `f(1)  # Output: 2`, `print(f(1))  # Output: 2`, `` `f(1)` returns `2` ``, and
LeetCode's `Input: x = 1` then `Output: 2` for a prompt with one stub (rlvr.verify.code.prompt_text
carries those as `f(x = 1) -> 2`); a call by keyword, `>>> f(x=1)`, is also the positional call
`f(1)`. `shown_calls` gives their arguments as `call_key`s; an assert that calls the candidate only
on shown arguments is the prompt's own example (rlvr.verify.code.asserts leaves it out of the
fraction, and a solution failing one earns 0).

What it decides: which calls are shown with an answer. What it does not defend: an example given in
words only ("for a list of three ones it returns 3") or with a verb not read (`f(1) is 2`, `f(1)
yields 2`); a prose example whose answer is on the next line.

Test: the doctests (tests/unit/verify/test_doctests.py), tests/integration/test_code_trust.py,
tests/integration/test_redteam.py.
"""

from __future__ import annotations

import ast
import re

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
