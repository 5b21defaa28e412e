"""A Python reward plug-in that hangs: its worker process is killed at the deadline, its rows
become verifier_error and the other batches are scored. The other plug-in rules:
tests/unit/verify/test_plugins.py."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.plugins import score_plugins, write_plugin


def test_hanging_python_reward_times_out_into_verifier_error(tmp_path: Path) -> None:
    py = write_plugin(
        tmp_path,
        "hang.py",
        """
        import time

        def slow(completions, **kwargs):
            if any("13" in c for c in completions):
                time.sleep(600)
            return [1.0] * len(completions)
    """,
    )
    rows, stats = score_plugins(tmp_path, [{"name": "slow", "python": f"{py}:slow", "batch_size": 2, "timeout_s": 2.0}])
    # batches: rows 0-1 (a: 12, 12), rows 2-3 (a: 13 -> hangs, b: json), rows 4-5
    assert [r["verifier_error"] for r in rows] == [False, False, True, True, False, False]
    assert stats["plugin_timeouts"] == 1 and stats["plugin_errors"] == 2
    assert "verifier_error: reward_slow: timeout: the batch took over 2s" in rows[2]["reason"]
    assert rows[4]["components"][0]["score"] == 1.0  # the worker was replaced and went on
