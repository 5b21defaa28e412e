"""The Python tiers of verification, as one table: each decides the verify_rows that pass 1
(sql/verify.sql) left to it (by their `verifier`), reading them through its own SQL file, and
returns their verdicts as FILLS rows with its counts. rlvr.verify.scoring runs them in TIERS' order.

- math (`undecided` rows): math-verify in worker processes with a per-row timeout (rlvr.verify.math);
  a crash or a timeout is a `verifier_error: ...` reason, never a 0;
- code (`code` rows): the response's fenced code against the problem's tests under bubblewrap
  (rlvr.verify.code); the sandbox breaking raises;
- logic (`logic` rows): a formula answer other than the gold must follow from the premises
  (rlvr.verify.logic, truth tables); a checker exception is that row's verifier_error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from rlvr.config import VerifySection
from rlvr.errors import RlvrError
from rlvr.verify import code as sandbox
from rlvr.verify import logic
from rlvr.verify.math import Check, check_pairs, math_verify_check

FILLS = pa.schema(
    [
        ("row_id", pa.int64()),
        ("correct", pa.bool_()),
        ("score", pa.float64()),
        ("verifier_error", pa.bool_()),
        ("reason", pa.string()),
        ("verifier", pa.string()),
    ]
)


class VerifyError(RlvrError, ValueError):
    pass


@dataclass(frozen=True)
class TierInputs:
    """What a tier may read besides its rows: the verify settings, the math checker and the
    folders the sandbox must not see."""

    cfg: VerifySection
    check: Check = math_verify_check
    hide: Sequence[Path] = ()


Counts = dict[str, int]


@dataclass(frozen=True)
class Tier:
    """A Python tier: the verify_rows it decides (`verifier`), the SQL file that reads them with what
    it needs (`rows_sql`, taking the named `params` of the files), the stats key that counts them,
    and `decide(rows, inputs) -> (FILLS rows, counts)`: counts add into score_with_stats' stats."""

    verifier: str
    rows_sql: str
    stat: str
    decide: Callable[[pa.Table, TierInputs], tuple[pa.Table, Counts]]
    params: tuple[str, ...] = field(default=())


def math_fills(undecided: pa.Table, inputs: TierInputs) -> tuple[pa.Table, Counts]:
    """math-verify on the undecided rows -> verify_fills rows (row_id, correct, verifier_error, reason)."""
    rows, cfg = undecided.to_pylist(), inputs.cfg
    verdicts, stats = check_pairs(
        [(r["gold"], r["pred"]) for r in rows],
        timeout_s=cfg.mathverify_timeout_s,
        workers=cfg.mathverify_workers,
        check=inputs.check,
    )
    out = []
    for r, v in zip(rows, verdicts, strict=True):
        if v.error is not None:
            reason = (
                f"verifier_error: math_verify: {v.error} (gold {r['gold']!r}, got {r['pred']!r}); left out of the group baseline"
            )
        elif v.unread is not None:
            reason = f"wrong: got {r['pred_norm']}, expected {r['gold_norm']} (math_verify cannot read the answer: {v.unread})"
        elif v.correct:
            reason = f"correct: {r['pred_norm']} = {r['gold_norm']} (math_verify)"
        else:
            reason = f"wrong: got {r['pred_norm']}, expected {r['gold_norm']} (math_verify: not equivalent)"
        if r["extraction"] in ("boxed", "gsm8k", "final_line", "last_number"):  # as verify.sql words it
            reason += f" (no <answer> tag; taken from {r['extraction']})"
        out.append(
            {
                "row_id": r["row_id"],
                "correct": bool(v.correct),
                "score": float(bool(v.correct)),
                "verifier_error": v.error is not None,
                "reason": reason,
                "verifier": "math_verify",
            }
        )
    counts = {"verifier_errors": stats["errors"], "timeouts": stats["timeouts"], "worker_restarts": stats["worker_restarts"]}
    return pa.Table.from_pylist(out, schema=FILLS), counts


def code_fills(rows: pa.Table, inputs: TierInputs) -> tuple[pa.Table, Counts]:
    """Sandbox tier: the response's fenced code + the problem's tests (assert program or stdin/stdout
    cases, rlvr.verify.code.make_check), run under bubblewrap. score = 1/0 (all_pass) or the fraction of
    tests passed (verify.code_reward). A missing code block is a 0 with its reason; the sandbox
    breaking raises."""
    items, out, cfg = [], [], inputs.cfg
    for r in rows.to_pylist():
        code = sandbox.extract_code(r["response_text"], entry_point=r["entry_point"], tests=r["tests"])
        if code is None:
            out.append(
                {
                    "row_id": r["row_id"],
                    "correct": False,
                    "score": 0.0,
                    "verifier_error": False,
                    "verifier": "sandbox",
                    "reason": "no_code: no fenced code block in the response",
                }
            )
            continue
        if not r["tests"]:
            raise VerifyError(f"code problem {r['prompt_id']!r} has no tests; fill the `tests` column of problems/")
        try:
            items.append((r["row_id"], sandbox.make_check(code, r["tests"])))
        except ValueError as err:
            raise VerifyError(f"code problem {r['prompt_id']!r}: bad `tests`: {err}") from None
    limits = sandbox.Limits(wall_seconds=cfg.code_timeout_s, memory_mb=cfg.code_memory_mb)
    verdicts = sandbox.check_many([t for _, t in items], limits=limits, hide=inputs.hide)
    for (row_id, _), v in zip(items, verdicts, strict=True):
        score = v.fraction if cfg.code_reward == "fraction" else float(v.passed)
        out.append(
            {
                "row_id": row_id,
                "correct": v.passed,
                "score": score,
                "verifier_error": False,
                "verifier": "sandbox",
                "reason": ("correct: all tests passed" if v.passed else v.reason) + " (sandbox)",
            }
        )
    return pa.Table.from_pylist(sorted(out, key=lambda x: x["row_id"]), schema=FILLS), {}


def logic_fills(rows: pa.Table, inputs: TierInputs) -> tuple[pa.Table, Counts]:
    """Logic tier: a formula answer is checked against the premises in the problem's meta, and its
    variable to eliminate when it names one (rlvr.verify.logic.check_conclusion, truth tables). Answers are parsed, never evaluated as
    code; a checker exception on a row is that row's verifier_error, the others are scored."""
    out = []
    for r in rows.to_pylist():
        try:
            meta = json.loads(r["meta"])
            correct, reason = logic.check_conclusion(meta["premises"], r["answer"], eliminate=meta.get("eliminate") or "")
            error = False
        except Exception as err:
            correct, error = False, True
            reason = f"verifier_error: logic: {type(err).__name__}: {err}; left out of the group baseline"
        out.append(
            {
                "row_id": r["row_id"],
                "correct": correct,
                "score": float(correct),
                "verifier_error": error,
                "reason": reason,
                "verifier": "logic",
            }
        )
    fills = pa.Table.from_pylist(out, schema=FILLS)
    return fills, {"verifier_errors": sum(fills["verifier_error"].to_pylist())}


# in this order; a tier's rows are counted before any tier runs (a fill never moves a row to another tier)
TIERS = (
    Tier("undecided", "verify_undecided", "undecided", math_fills),
    Tier("code", "verify_code", "code", code_fills, params=("rollouts", "problems")),
    Tier("logic", "verify_logic", "logic", logic_fills, params=("problems",)),
)
