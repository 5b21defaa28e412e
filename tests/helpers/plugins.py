"""Hand-written rows and reward plug-ins scored through the real verify pass (test_plugins and the
plug-in timeout test)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rlvr.config import RewardPlugin, VerifySection
from rlvr.verify import score_with_stats
from tests.helpers.verify_inputs import write_inputs

PROBLEMS = [{"prompt_id": "a", "answer": "12"}, {"prompt_id": "b", "answer": "7"}]
# (prompt_id, text, response length in tokens)
RESPONSES = [
    ("a", "<answer>12</answer>", 3),
    ("a", "<answer>12</answer>", 9),
    ("a", "<answer>13</answer>", 3),
    ("b", '{"x": 1}', 4),
    ("b", "not json", 4),
    ("b", "", 1),
]


def write_plugin(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def score_plugins(tmp_path: Path, rewards: list[dict], responses=RESPONSES, **verify) -> tuple[list[dict], dict]:
    r, p = write_inputs(tmp_path, PROBLEMS, responses)
    cfg = VerifySection(rewards=[RewardPlugin(**x) for x in rewards], **verify)
    table, stats = score_with_stats(r, p, cfg)
    return table.to_pylist(), stats
