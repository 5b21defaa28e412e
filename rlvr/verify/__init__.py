"""Verification: the verify stage's scoring pass and its tiers, one module each.

    scoring.py the pass: one DuckDB connection runs the SQL tier, hands each undecided row to its
               Python tier, then composes rewards and group advantages (sql/verify_rewards.sql,
               verify_groups.sql)
    tiers.py   the Python tiers as one table (TIERS): which verify_rows each decides, the SQL that
               reads them, the function that decides them (math, code, logic)
    sql/       the SQL tier: extraction, normalisation, exact/numeric/verdict decisions, citations
               (a <cite> span is supported within one sentence of a source: verify_citations.sql)
    math.py    symbolic math by math-verify, in worker processes with a per-row timeout
    code/      code run against its tests in the bubblewrap sandbox
    logic/     propositional formulas: parser, truth tables, verdicts (never eval)
    pool.py    the worker processes of math.py and plugins.py: one job each at a time, a deadline per
               job, a dead or hung worker killed and replaced

Every tier answers correct / wrong / cannot-decide-with-a-reason; a tier that crashes or times out
marks the row `verifier_error`, never a silent 0. Test: tests/test_verify*.py, test_mathcheck.py,
test_sandbox.py, test_logic.py, test_pool.py.
"""

from rlvr.verify.scoring import VerifyError, connect, score, score_with_stats

__all__ = ["VerifyError", "connect", "score", "score_with_stats"]
