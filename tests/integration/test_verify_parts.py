"""verify(i) in parts (rollout.shards = K > 1): part p scores rollout part p's responses, so a code
task's sandbox rows spread over the parts, and the stage committed from its parts has the scores
of the same run in one part, row for row."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import UPDATES
from rlvr.stages.lineage import StageOrderError
from rlvr.store.records import read_record
from rlvr.store.run import open_run
from rlvr.verify.code import sandbox_problem
from rlvr.views.sql import run_sql

pytestmark = pytest.mark.slow
SCORES = "SELECT * FROM scores ORDER BY ALL"
UPDATE_COLS = ", ".join(c for c in UPDATES.names if c not in ("seconds", "peak_memory_mb"))  # but the wall clock


def _run(root: Path, shards: int) -> Path:
    cfg = {
        "run": {"iterations": 1},
        "model": {"tiny_warmup_steps": 20},
        "task": {"name": "humaneval"},
        "rollout": {
            "prompts_per_iteration": 4,
            "group_size": 2,
            "max_new_tokens": 24,
            "engine": "transformers",
            "shards": shards,
        },
    }
    create_or_open(root, Config.model_validate(cfg), 1)
    stages.prepare(root)
    for p in range(shards) if shards > 1 else ():
        stages.rollout(root, 0, part=p)
    stages.rollout(root, 0)
    return root


def test_verify_in_two_parts_scores_what_one_part_scores(tmp_path: Path) -> None:
    if sandbox_problem() is not None:
        pytest.skip(f"no code sandbox here: {sandbox_problem()}")
    one, two = _run(tmp_path / "one", 1), _run(tmp_path / "two", 2)
    stages.verify(one, 0)
    with pytest.raises(StageOrderError, match=r"not committed yet: verify\.part-1-of-2, verify\.part-2-of-2"):
        stages.verify(two, 0)  # the stage is committed from its parts only
    for p in (0, 1):
        stages.verify(two, 0, part=p)
    result = stages.verify(two, 0)
    assert not result.skipped and result.rows == 4 * 2
    assert run_sql(two, SCORES).to_pylist() == run_sql(one, SCORES).to_pylist()

    paths = open_run(two).paths
    whole, rollout = read_record(paths.record("verify", 0)), read_record(paths.record("rollout", 0))
    assert [p["stage"] for p in whole.extra["parts"]] == ["verify.part-1-of-2", "verify.part-2-of-2"]
    # each part scored its rollout part's rows, in the sandbox, and wrote into its own folder
    assert [p["rows"] for p in whole.extra["parts"]] == [p["rows"] for p in rollout.extra["parts"]] == [4, 4]
    for k in (1, 2):
        own = read_record(paths.record(f"verify.part-{k}-of-2", 0))
        assert own.extra["code"] == 4 and all(o.path.startswith(f"scores/iteration=000000/part-{k}-of-2/") for o in own.outputs)
    reference = read_record(open_run(one).paths.record("verify", 0)).extra
    assert {k: whole.extra[k] for k in ("correct", "rows", "code", "verifier_errors")} == {
        k: reference[k] for k in ("correct", "rows", "code", "verifier_errors")
    }
    assert whole.extra["reward_mean"] == pytest.approx(reference["reward_mean"])
    stages.update(one, 0)
    stages.update(two, 0)  # reads the parts' scores, sorted as one file's
    q = f"SELECT {UPDATE_COLS} FROM updates ORDER BY global_step"
    assert run_sql(two, q).to_pylist() == run_sql(one, q).to_pylist()
