"""The stages of a run as plain functions; each is idempotent and commits through rlvr.store.

    preparation.py  prepare(run): problems/*.parquet and policy v0
    generation.py   rollout(run, i): prompts drawn, rendered (rlvr.problems), sampled (rlvr.rollout),
                    including dynamic sampling's refill loop
    evaluation.py   evaluate(run, i), and evaluate_policy: the one evaluation it and `rlvr eval` run
                    (greedy or pass@k with the unbiased estimator)
    scoring.py      verify(run, i): rlvr.verify over the rollouts, scores committed
    training.py     update(run, i): rlvr.train in-process or under torchrun, v_{i+1} committed;
                    update_node: another machine's share of an update on several (update.nnodes)
    base.py         StageResult and the skip-or-commit wrapper every stage uses
    lineage.py      each stage's inputs (its fingerprint) and what is still to compute
    ingest.py       `rlvr import`: responses made elsewhere committed as an iteration's rollouts
    rescore.py      `rlvr rescore`: stored rollouts verified again into a named scoring

Iteration i samples with v_i and its update writes v_{i+1}. No Prefect here: rlvr.tasks wraps
these functions; tests call them directly. Test: tests/unit/stages/test_stages.py, test_e2e.py.
"""

from rlvr.stages.base import ContextLengthError, StageResult
from rlvr.stages.evaluation import evaluate
from rlvr.stages.generation import iteration_prompts, mixture_prompts, rollout
from rlvr.stages.preparation import SandboxUnavailable, prepare
from rlvr.stages.scoring import verify
from rlvr.stages.training import GangAborted, Node, launch_update, update, update_node

__all__ = [
    "ContextLengthError",
    "GangAborted",
    "Node",
    "SandboxUnavailable",
    "StageResult",
    "evaluate",
    "iteration_prompts",
    "launch_update",
    "mixture_prompts",
    "prepare",
    "rollout",
    "update",
    "update_node",
    "verify",
]
