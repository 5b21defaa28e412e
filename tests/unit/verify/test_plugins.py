"""Reward plug-ins through the real verify pass (DuckDB + spawned workers): a SQL reward and a
Python reward change `reward` and `reason` exactly as hand-computed, None and NULL become
verifier_error (a timeout: tests/integration/test_plugins_timeout.py), and every kind of broken plug-in is a one-line RewardPluginError.

    .venv/bin/python -m pytest -q tests/unit/verify/test_plugins.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import ConfigError, parse_config
from rlvr.errors import RlvrError
from rlvr.verify.plugins import RewardPluginError, plugin_kwargs
from tests.helpers import ROOT
from tests.helpers.plugins import RESPONSES, score_plugins, write_plugin

EXAMPLES = ROOT / "examples" / "rewards"  # the README's plug-ins


def test_sql_reward_adds_a_weighted_component(tmp_path: Path) -> None:
    base, _ = score_plugins(tmp_path, [])
    rows, stats = score_plugins(tmp_path, [{"name": "short", "weight": 2.0, "sql": str(EXAMPLES / "short_exact.sql")}])
    assert stats["plugin_errors"] == 0
    a = [r for r in rows if r["prompt_id"] == "a"]
    assert [r["reward"] for r in a] == [1.0 + 2.0, 1.0 + 2.0 * 8 / 9, 0.0]  # correct + 2 * (1 | 8/9 tokens | 0)
    assert [r["components"] for r in a][1] == [
        {
            "name": "short",
            "weight": 2.0,
            "score": 8 / 9,
            "reward": 2.0 * 8 / 9,
            "reason": "reward_short = 2 * 0.888889 (exact match in 9 tokens)",
        }
    ]
    assert a[2]["reason"] == "wrong: got 13, expected 12; reward_short = 2 * 0 (wrong: 13 vs 12)"
    for old, new in zip(base, rows, strict=True):  # the built-in reason is kept, the component's appended
        comp = new["components"][0]
        assert new["reason"] == old["reason"] + "; " + comp["reason"]
        assert new["reward"] == old["reward"] + comp["reward"] and new["correct"] == old["correct"]
        assert old["components"] == [] and old["scoring"] == new["scoring"] == "default"
    assert a[0]["advantage"] > a[1]["advantage"] > a[2]["advantage"]  # the group baseline sees the new rewards


def test_python_reward_none_is_verifier_error(tmp_path: Path) -> None:
    py = EXAMPLES / "json_valid.py"
    rows, stats = score_plugins(
        tmp_path,
        [{"name": "json", "weight": 0.5, "python": f"{py}:json_valid", "batch_size": 4}],
        weights={"default": {"correct": 0.0}},
    )
    b = [r for r in rows if r["prompt_id"] == "b"]
    assert [r["reward"] for r in b] == [0.5, 0.0, 0.0]
    assert [c["score"] for r in b for c in r["components"]] == [1.0, 0.0, None]
    assert b[0]["reason"].endswith("; reward_json = 0.5 * 1") and not b[0]["verifier_error"]
    assert b[2]["verifier_error"] and "verifier_error: reward_json: the plug-in returned no score" in b[2]["reason"]
    assert stats["plugin_errors"] == 1
    # the unscorable row is out of the baseline: 2 rows, mean 0.25, and its own advantage is 0
    assert [r["group_size"] for r in b] == [2, 2, 2] and b[0]["group_mean"] == 0.25 and b[2]["advantage"] == 0.0
    assert [r["reward"] for r in rows if r["prompt_id"] == "a"] == [0.0, 0.0, 0.0]  # "<answer>12</answer>" is not JSON


def test_python_reward_gets_trl_arguments(tmp_path: Path) -> None:
    """Conversational completions and the dataset's columns as keyword arguments, as TRL passes them."""
    py = write_plugin(
        tmp_path,
        "conv.py",
        """
        def check(completions, prompts, answer, solution, completion_ids, extracted_answer, **kwargs):
            assert completions[0][0]["role"] == "assistant" and prompts[0][0]["content"] == "q"
            assert answer == solution and len(completion_ids) == len(completions)
            return [float(c[0]["content"].count("1")) + (0.5 if x == a else 0.0)
                    for c, x, a in zip(completions, extracted_answer, answer)]
    """,
    )
    rows, _ = score_plugins(
        tmp_path,
        [{"name": "ones", "python": f"{py}:check", "completions": "conversational", "batch_size": 2}],
        weights={"default": {"correct": 0.0}},
    )
    assert [r["reward"] for r in rows] == [1.5, 1.5, 1.0, 1.0, 0.0, 0.0]


def test_unscorable_sql_rows_are_verifier_errors(tmp_path: Path) -> None:
    sql = write_plugin(
        tmp_path,
        "partial.sql",
        """
        SELECT prompt_id, sample_idx, CASE WHEN sample_idx = 0 THEN NULL ELSE 1 END AS score, 'ok' AS reason
        FROM responses WHERE prompt_id = 'a'
    """,
    )
    rows, _ = score_plugins(tmp_path, [{"name": "part", "sql": sql}])
    assert [r["verifier_error"] for r in rows] == [True, False, False, True, True, True]
    assert "reward_part: no row returned for this response" in rows[3]["reason"]


BAD_PY = {
    "raises": ("def f(completions, **kwargs):\n    raise KeyError('boom')\n", "raised on rows 0..5: KeyError: 'boom'"),
    "count": ("def f(completions, **kwargs):\n    return [1.0]\n", "returned 1 scores for a batch of 6 completions"),
    "kind": (
        "def f(completions, **kwargs):\n    return ['high'] * len(completions)\n",
        "row 0: score 'high' is not a finite float",
    ),
    "syntax": ("def f(completions:\n", "cannot be imported: SyntaxError"),
    "noname": ("def g(completions, **kwargs):\n    return []\n", "cannot be imported: AttributeError"),
}


@pytest.mark.parametrize("case", sorted(BAD_PY))
def test_broken_python_reward_is_a_one_line_error(tmp_path: Path, case: str) -> None:
    source, message = BAD_PY[case]
    py = write_plugin(tmp_path, f"bad_{case}.py", source)
    with pytest.raises(RewardPluginError, match="reward plug-in 'bad'") as err:
        score_plugins(tmp_path, [{"name": "bad", "python": f"{py}:f", "batch_size": 8}])
    assert message in str(err.value) and "\n" not in str(err.value) and isinstance(err.value, RlvrError)


def test_python_reward_missing_module_or_file(tmp_path: Path) -> None:
    with pytest.raises(RewardPluginError, match="no_such_module_xyz.*ModuleNotFoundError"):
        score_plugins(tmp_path, [{"name": "m", "python": "no_such_module_xyz:f"}])
    with pytest.raises(RewardPluginError, match="nope.py.*FileNotFoundError"):
        score_plugins(tmp_path, [{"name": "m", "python": str(tmp_path / "nope.py") + ":f"}])


BAD_SQL = {
    "write": ("CREATE TABLE x AS SELECT 1", "exactly one SELECT over `responses`; got CREATE"),
    "two": ("SELECT 1; SELECT 2", "got SELECT, SELECT"),
    "file": (
        "SELECT prompt_id, sample_idx, 1 AS score, content AS reason FROM read_text('/etc/hostname'), responses",
        "disabled",
    ),
    "columns": ("SELECT prompt_id, sample_idx, 1 AS points FROM responses", "missing score, reason"),
    "dupe": ("SELECT prompt_id, 0 AS sample_idx, 1 AS score, '' AS reason FROM responses", "repeats (prompt_id, sample_idx)"),
    "text": ("SELECT prompt_id, sample_idx, 'x' AS score, '' AS reason FROM responses", "column score = 'x'"),
    "unknown": ("SELECT prompt_id, sample_idx, 1 AS score, nope AS reason FROM responses", "the relation is `responses`"),
}


@pytest.mark.parametrize("case", sorted(BAD_SQL))
def test_bad_sql_reward_is_refused_naming_the_file(tmp_path: Path, case: str) -> None:
    text, message = BAD_SQL[case]
    sql = write_plugin(tmp_path, f"bad_{case}.sql", text)
    with pytest.raises(RewardPluginError, match=f"bad_{case}.sql") as err:
        score_plugins(tmp_path, [{"name": "bad", "sql": sql}])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_plugin_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="exactly one of sql"):
        parse_config({"verify": {"rewards": [{"name": "x"}]}})
    with pytest.raises(ConfigError, match="used twice"):
        parse_config({"verify": {"rewards": [{"name": "x", "sql": "a.sql"}, {"name": "x", "sql": "b.sql"}]}})
    with pytest.raises(ConfigError, match="verify.rewards.0.name"):
        parse_config({"verify": {"rewards": [{"name": "no spaces", "sql": "a.sql"}]}})


def test_plugin_kwargs_standard_format() -> None:
    rows = [{"response_text": "x", "prompt": "p", "response_token_ids": [1], "answer": "3", "meta": None}]
    kw = plugin_kwargs(rows, "standard")
    assert kw == {
        "completions": ["x"],
        "prompts": ["p"],
        "completion_ids": [[1]],
        "answer": ["3"],
        "meta": [None],
        "solution": ["3"],
    }


def test_python_reward_as_module_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'module:function' resolves from the working directory, in the parent and in the workers."""
    (tmp_path / "my_rewards_mod.py").write_text(
        "def length(completions, **kwargs):\n    return [float(len(c)) for c in completions]\n"
    )
    monkeypatch.chdir(tmp_path)
    rows, _ = score_plugins(
        tmp_path, [{"name": "len", "python": "my_rewards_mod:length", "weight": 0.1}], weights={"default": {"correct": 0.0}}
    )
    assert [r["reward"] for r in rows] == pytest.approx([0.1 * len(t) for _, t, _ in RESPONSES])


@pytest.mark.parametrize("case", ["syntax", "noname", "missing_file", "missing_sql"])
def test_a_broken_plugin_fails_before_the_run_folder_exists(tmp_path: Path, case: str) -> None:
    """Preflight loads every reward plug-in: a broken one fails the start, not the first verify after
    a whole rollout, and no run folder is left frozen with the broken config."""
    from rlvr.checks.start import create_or_open

    if case in BAD_PY:
        plugin = {"name": "bad", "python": f"{write_plugin(tmp_path, f'bad_{case}.py', BAD_PY[case][0])}:f"}
    elif case == "missing_file":
        plugin = {"name": "bad", "python": f"{tmp_path / 'nope.py'}:f"}
    else:
        plugin = {"name": "bad", "sql": str(tmp_path / "nope.sql")}
    cfg = parse_config({"verify": {"rewards": [plugin]}})
    d = tmp_path / "run"
    with pytest.raises(RewardPluginError, match="reward plug-in 'bad'"):
        create_or_open(d, cfg, 1)
    assert not d.exists()
