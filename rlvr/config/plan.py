"""The stage plan: which policy each rollout samples from, the order of the stages, and which
stage may start when. Pure functions of (iterations, eval points, rollout.max_staleness = k).

- behaviour_version(i, k): rollout(i) samples from policy v_max(0, i-k), the newest version at most
  k versions old that the plan can promise before rollout(i) starts. k = 0: v_i (on-policy, the
  order rlvr always had); k = 1: rollout(i+1) samples v_i while update(i) trains v_i -> v_{i+1}
  (one-step off-policy, as veRL's one_step_off_policy and AReaL's bounded staleness). The
  version follows from k alone, never from timing, so a killed async run resumes byte-identical.
- stage_plan(...): one sequential order of every stage (a topological order of stage_deps). For
  k = 0 it is exactly the order rlvr always ran: evaluate(i) before rollout(i), verify(i), update(i).
- stage_deps(...): what each stage waits for. Two lanes: the generation lane (evaluate, rollout,
  verify, one at a time, in plan order: they share the engine and the verifier pool) and the
  trainer lane (update(i) after update(i-1)); a generation stage also waits for the update that
  commits the policy it reads, and update(i) for verify(i). With k >= 1, rollout(i+1) and
  verify(i+1) therefore run while update(i) runs; with k = 0 the lanes never overlap.

Test: pytest tests/e2e/test_async.py
"""

from __future__ import annotations

Stage = tuple[str, int | None]


def behaviour_version(iteration: int, max_staleness: int) -> int:
    """The policy version rollout(iteration) samples from: v_max(0, i - k).

    >>> [behaviour_version(i, 0) for i in range(4)], [behaviour_version(i, 1) for i in range(4)]
    ([0, 1, 2, 3], [0, 0, 1, 2])
    """
    return max(0, iteration - max_staleness)


def needed_version(stage: str, iteration: int, max_staleness: int) -> int:
    """The policy version a stage reads: evaluate(i) v_i, rollout(i) and verify(i) the behaviour
    version, update(i) v_i (which it trains)."""
    return behaviour_version(iteration, max_staleness) if stage in ("rollout", "verify") else iteration


def stage_plan(iterations: int, eval_points: list[int], max_staleness: int) -> list[Stage]:
    """Every stage in one sequential order: prepare; the generation stages sorted by the policy
    version they read (evaluate before rollout before verify of one version); each update(i)
    placed just before the first stage that reads v_{i+1}.

    >>> stage_plan(2, [0, 2], 0)  # doctest: +NORMALIZE_WHITESPACE
    [('prepare', None), ('evaluate', 0), ('rollout', 0), ('verify', 0), ('update', 0),
     ('rollout', 1), ('verify', 1), ('update', 1), ('evaluate', 2)]
    >>> stage_plan(3, [], 1)  # doctest: +NORMALIZE_WHITESPACE
    [('prepare', None), ('rollout', 0), ('verify', 0), ('rollout', 1), ('verify', 1), ('update', 0),
     ('rollout', 2), ('verify', 2), ('update', 1), ('update', 2)]
    """
    kinds = {"evaluate": 0, "rollout": 1, "verify": 2}
    gen = [(s, i) for i in range(iterations) for s in ("rollout", "verify")] + [("evaluate", j) for j in eval_points]
    gen.sort(key=lambda st: (needed_version(st[0], st[1], max_staleness), st[1], kinds[st[0]]))
    plan: list[Stage] = [("prepare", None)]
    updated = 0  # update(0..updated-1) placed: versions v0..v_updated exist
    for stage, i in gen:
        while updated < needed_version(stage, i, max_staleness):
            plan.append(("update", updated))
            updated += 1
        plan.append((stage, i))
    plan += [("update", u) for u in range(updated, iterations)]
    return plan


def stage_deps(plan: list[Stage], max_staleness: int) -> dict[Stage, list[Stage]]:
    """What each stage of `plan` (stage_plan's order) waits for: the previous stage of its lane,
    prepare, the update that commits the version it reads, and for update(i) verify(i).

    >>> deps = stage_deps(stage_plan(2, [], 1), 1)
    >>> deps[("rollout", 1)], deps[("update", 1)]
    ([('prepare', None), ('verify', 0)], [('prepare', None), ('verify', 1), ('update', 0)])
    """
    deps: dict[Stage, list[Stage]] = {}
    last: dict[str, Stage] = {}  # lane -> its latest stage
    for stage, i in plan:
        if i is None:
            deps[(stage, i)] = []
            continue
        lane = "train" if stage == "update" else "generate"
        need = {("prepare", None)}
        if lane in last:
            need.add(last[lane])
        v = needed_version(stage, i, max_staleness)
        if stage != "update" and v > 0:
            need.add(("update", v - 1))
        if stage == "update":
            need.add(("verify", i))
        deps[(stage, i)] = sorted(need, key=plan.index)
        last[lane] = (stage, i)
    return deps
