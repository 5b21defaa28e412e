"""Verification tier 2: math-verify on the rows the SQL tier left undecided, in worker processes.

The SQL tier (sql/verify.sql) decides plain numbers and plain strings; rows whose gold answer is
symbolic (LaTeX, sqrt, powers, intervals, sets, expressions) come here as (gold, pred) pairs.

What reaches this tier is already in the gold's shape, because math-verify evaluates what
it reads and would pay an answer that only restates the question ('3 * 4' for 12, '\\binom{10}{3}'
for 120): a gold that is a value (a number, a fraction, a repeating decimal) takes a number only and
never comes here; for a closed-form or expression gold ('2\\sqrt{3}', 'x^2+1') SQL refuses, before
this tier, arithmetic between literal numbers ('\\sqrt{4 \\cdot 3}', 'x^2+2-1'), factorials, \\binom,
sums, and several values ('3.46 \\approx 2\\sqrt{3}', 'a or b', '2\\sqrt{3} = \\sqrt{12}'). Not defended
here: an equivalent form that is not literal arithmetic ('\\sqrt{12}' and '\\sqrt{3}+\\sqrt{3}' for
'2\\sqrt{3}' are paid: math-verify's equivalence is the rule for closed forms). For an interval gold, an
inequality in one variable is read as the interval it describes first ('0 < x < 1' is (0, 1):
`inequality_interval`), which math-verify does not do.

Each pair is checked by `verify(parse(gold), parse(pred))` (math-verify, gold first) in a worker
process, one row at a time, so that:
  - the per-row timeout is a SIGALRM timer on the worker's main thread (math-verify's own SIGALRM
    timeout only works there; in a thread it fails and every score became 0: STYLE.md);
  - a row that raises, times out, or kills its worker (segfault, OOM, os._exit) gets an error
    verdict naming the cause, never a silent "wrong"; the worker is replaced and the other rows go on;
    an answer that math-verify raises on while the gold reads fine is wrong, with the error as its
    reason (UnreadableAnswer: in doubt, refused);
  - a worker that ignores the timer (stuck in C code) is killed after timeout + grace.
The processes, their deadlines and their replacement are rlvr.verify.pool's (shared with the reward
plug-ins).

    from rlvr.verify.math import check_pairs
    verdicts, stats = check_pairs([("\\sqrt{2}", "2^{1/2}")], timeout_s=5.0, workers=2)

Test: tests/unit/verify/test_mathcheck.py (real math-verify rows, plus injectable check functions that raise,
hang and crash their worker).
"""

from __future__ import annotations

import functools
import logging
import re
import signal
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from multiprocessing.connection import Connection

from rlvr.verify.pool import WorkerPool

Check = Callable[[str, str], bool]

GRACE_S = 5.0  # after the in-worker timer should have fired, the parent kills the worker
STARTUP_S = 120.0  # a worker must be ready (imports done) within this; 2 cores under load are slow


class MathCheckError(RuntimeError):
    """The tier itself cannot run (a worker cannot start): not a fault of any one row."""


@dataclass(frozen=True)
class MathVerdict:
    """correct is None exactly when error says why the row could not be checked; unread says why a wrong
    answer could not be read (math-verify raised on the answer, the gold read fine)."""

    correct: bool | None
    error: str | None = None
    unread: str | None = None


class UnreadableAnswer(Exception):
    """math-verify raised while reading the answer (the gold read fine). The answer is in doubt, so it is
    wrong, with this as its reason: were it a verifier error it would be left out of its group's baseline, a
    way for a wrong answer to escape its penalty (a 5,000-digit integer, digits of another script)."""


class RowTimeout(BaseException):
    """Raised by the SIGALRM handler. A BaseException, so that the `except Exception` blocks inside
    sympy and math-verify cannot swallow it and turn a timeout into an answer."""


def _as_math(s: str) -> str:
    # math-verify's LaTeX extractor wants an anchor: a bare "\sqrt{2}" parses to [] but "$\sqrt{2}$"
    # parses to sqrt(2) (checked with math-verify 0.9). Text that has its own anchor is left alone.
    return s if "$" in s or "\\boxed" in s else f"${s}$"


# relations of an inequality: less-than or greater-than, and strict (an open end) or not (a closed end)
_LESS = {"<": True, "\\lt": True, "<=": False, "≤": False, "\\le": False, "\\leq": False, "\\leqslant": False}
_GREATER = {">": True, "\\gt": True, ">=": False, "≥": False, "\\ge": False, "\\geq": False, "\\geqslant": False}
_STRICT = _LESS | _GREATER
_OP = "(" + "|".join(re.escape(op) for op in sorted(_STRICT, key=len, reverse=True)) + ")"
_SIDE = r"([^<>=≤≥]+?)"  # a bound: no relation inside it
_VAR = "([a-df-hj-zA-Z])"  # one letter, not the constants e and i
_CHAIN = re.compile(rf"{_SIDE}{_OP}{_VAR}{_OP}([^<>=≤≥]+)")
_UPPER = re.compile(rf"{_VAR}{_OP}([^<>=≤≥]+)")
_LOWER = re.compile(rf"{_SIDE}{_OP}{_VAR}")
_INTERVAL = re.compile(r"\s*[(\[].*,.*[)\]]\s*")
_IN_SET = re.compile(r"^\s*[a-zA-Z]\s*\\in\s*(?=[(\[])")


def _interval(lo: str, lo_open: bool, hi: str, hi_open: bool) -> str:
    return f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def inequality_interval(pred: str) -> str | None:
    """An inequality in one variable as the interval it describes, or None: '0 < x < 1' -> '(0, 1)',
    '0 \\le x < 1' -> '[0, 1)', '1 > x > 0' -> '(0, 1)', 'x \\ge 2' -> '[2, \\infty)', '3 > x' ->
    '(-\\infty, 3)'. Spaces are dropped first, as the SQL tier passes the answer ('0\\lex\\le1': the
    longest relation is read first). math-verify does not equate an inequality with an interval, so for
    an interval gold this form of a right answer would be refused."""
    text = re.sub(r"\s+|\\[,;:! ]", "", pred).strip("$")  # spaces, and LaTeX's ('x < -2 \\;\\text{or}\\; x > 3')
    if m := _CHAIN.fullmatch(text):
        a, op1, _, op2, b = m.groups()
        if op1 in _LESS and op2 in _LESS:  # a < x < b
            return _interval(a, _STRICT[op1], b, _STRICT[op2])
        if op1 in _GREATER and op2 in _GREATER:  # a > x > b: (b, a)
            return _interval(b, _STRICT[op2], a, _STRICT[op1])
        return None
    if m := _UPPER.fullmatch(text):  # x < b, x > a
        _, op, v = m.groups()
        return _interval("-\\infty", True, v, _STRICT[op]) if op in _LESS else _interval(v, _STRICT[op], "\\infty", True)
    if m := _LOWER.fullmatch(text):  # a < x, b > x
        v, op, _ = m.groups()
        return _interval(v, _STRICT[op], "\\infty", True) if op in _LESS else _interval("-\\infty", True, v, _STRICT[op])
    return None


_OR = re.compile(r"\\text\s*\{\s*or\s*\}|\bor\b|\\lor\b|\\vee\b|∨|\\cup\b|∪")


def inequalities_interval(pred: str) -> str | None:
    """inequality_interval for one inequality, or for several joined by 'or' (also in \\text{}, \\lor,
    \\cup) as the union of their intervals: 'x < -2 \\text{ or } x > 3' -> '(-\\infty, -2) \\cup (3,
    \\infty)'. None when any part is not an inequality."""
    parts = [inequality_interval(p) for p in _OR.split(pred)]
    return None if None in parts else " \\cup ".join(parts)  # type: ignore[arg-type]


@functools.cache
def _keep_case() -> None:
    """math-verify reads LaTeX through latex2sympy, whose default lower-cases every symbol: M and m
    are one symbol to it, so '0' would be paid for '\\frac{(M-m)g}{M+m}' and '\\frac{m}{2}' for
    '\\frac{Mm}{M+m}'. Its parser is called with symbols kept as they
    are written; math-verify has no option for this, so its module's reference to latex2sympy is
    replaced, once per process, before anything is parsed (parse_latex_cached looks it up per call)."""
    import math_verify.parser
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig, latex2sympy

    math_verify.parser.latex2sympy = functools.partial(latex2sympy, conversion_config=ConversionConfig(lowercase_symbols=False))


def math_verify_check(gold: str, pred: str) -> bool:
    """math-verify, gold first (its comparison is not symmetric), with symbols kept in their case
    (`_keep_case`). Its own timeouts are turned off (they would reset this worker's SIGALRM timer)
    and its errors are raised, not logged and scored False; an empty parse is an error too, because
    "could not read" is not "wrong"."""
    from math_verify import parse, verify

    _keep_case()

    g = parse(_as_math(gold), parsing_timeout=None, raise_on_error=True)
    if not g:
        raise ValueError(f"math-verify could not parse the gold answer {gold!r}; fix the problem's answer")
    gold = _IN_SET.sub("", gold)  # 'x \\in [-1, 2]' is the interval [-1, 2]
    if _INTERVAL.fullmatch(gold) and (interval := inequalities_interval(pred)) is not None:
        pred = interval  # an interval gold: '0 < x < 1' is (0, 1); 'x < -2 or x > 3' is (-\infty, -2) \cup (3, \infty)
    try:
        p = parse(_as_math(pred), parsing_timeout=None, raise_on_error=True)
    except Exception as e:
        raise UnreadableAnswer(f"{type(e).__name__}: {e}") from e
    if not p:
        return False  # the model wrote something that is not maths: a wrong answer, not a verifier fault
    return bool(verify(g, p, timeout_seconds=None, raise_on_error=True))


def _on_alarm(signum: int, frame: object) -> None:
    raise RowTimeout


def run_one(check: Check, gold: str, pred: str, timeout_s: float) -> MathVerdict:
    """One row under a SIGALRM timer; must run on a process's main thread."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        ok = check(gold, pred)
        if not isinstance(ok, bool):
            return MathVerdict(None, f"check returned {type(ok).__name__}, not bool")
        return MathVerdict(ok)
    except RowTimeout:
        return MathVerdict(None, f"timeout after {timeout_s:g}s")
    except UnreadableAnswer as e:
        return MathVerdict(False, unread=str(e)[:300])
    except Exception as e:  # any verifier fault becomes this row's error verdict, with its cause
        return MathVerdict(None, f"{type(e).__name__}: {e}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _worker(conn: Connection, check: Check, timeout_s: float, warm: bool) -> None:
    """Worker main loop: receive (index, gold, pred), send (index, MathVerdict); None stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if warm:
        import math_verify  # noqa: F401  (import before the first row's timer starts)

        # math-verify warns once that its own timeouts are off: here the timer above replaces them
        for name in ("math_verify.parser", "math_verify.grader"):
            logging.getLogger(name).addFilter(lambda r: "Timeout is disabled" not in r.getMessage())
    conn.send("ready")
    while (msg := conn.recv()) is not None:
        i, gold, pred = msg
        conn.send((i, run_one(check, gold, pred, timeout_s)))


def _startup_error(msg: object, exitcode: int | None) -> MathCheckError:
    """A worker that did not say "ready": a set-up error, not a row's."""
    return MathCheckError(
        f"a math-verify worker process did not start (exit code {exitcode}); see its traceback above. "
        "Workers are spawned: a script that calls rlvr.verify must guard its entry point with "
        "`if __name__ == \"__main__\":`, and math-verify must be installed (pip install 'math-verify[antlr4_13_2]')"
    )


def check_pairs(
    pairs: list[tuple[str, str]],
    *,
    timeout_s: float,
    workers: int,
    check: Check = math_verify_check,
) -> tuple[list[MathVerdict], dict[str, int]]:
    """Check (gold, pred) pairs in `workers` processes (rlvr.verify.pool); one MathVerdict per pair, in order.

    `check(gold, pred) -> bool` must be a module-level function (it is pickled to the workers).
    Returns (verdicts, {"rows", "errors", "timeouts", "worker_restarts"})."""
    verdicts: list[MathVerdict | None] = [None] * len(pairs)
    stats = {"rows": len(pairs), "errors": 0, "timeouts": 0, "worker_restarts": 0}
    if not pairs:
        return [], stats
    pool = WorkerPool(
        _worker,
        (check, timeout_s, check is math_verify_check),
        size=min(workers, len(pairs)),
        startup_s=STARTUP_S,
        ready=lambda msg: msg == "ready",
        startup_error=_startup_error,
    )
    with closing(pool.run(len(pairs), lambda i: (i, *pairs[i]), timeout_s=timeout_s + GRACE_S)) as outcomes:
        for out in outcomes:
            if out.lost == "died":
                verdicts[out.index] = MathVerdict(None, f"worker process died (exit code {out.exitcode}) while checking this row")
            elif out.lost == "timeout":
                verdicts[out.index] = MathVerdict(None, f"timeout after {timeout_s:g}s (worker did not answer its timer; killed)")
            else:
                verdicts[out.index] = out.reply[1]
    stats["worker_restarts"] = pool.restarts
    done = [v for v in verdicts if v is not None]
    assert len(done) == len(pairs), "every row gets a verdict"
    stats["errors"] = sum(v.error is not None for v in done)
    stats["timeouts"] = sum(v.error is not None and v.error.startswith("timeout") for v in done)
    return done, stats
