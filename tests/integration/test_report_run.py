"""`rlvr report` on a real run (tiny model, two tasks, evals), opened in headless Chromium: the
numbers come from the committed shards, the plots were drawn by plotly.js (DOM after scripts ran,
their colours in a screenshot), text from the run stays text, and the CLI writes one
self-contained page. The page's parts without a run: tests/unit/views/test_report.py."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.views.report import PANELS, collect, render
from tests.helpers.rows import HOSTILE_HTML

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("CI") != "true",  # under CI a missing browser fails the test instead
    reason="no chromium: apt-get install -y chromium (.ci/run does)",
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, small_config: Config) -> Path:
    """Two iterations on arithmetic + logic, evaluated before each and after the last (the embedded
    tiny model built for this task mix: logic prompts need its longer context)."""
    data = small_config.model_dump(mode="json", exclude_none=True)
    data["task"] = {"name": ["arithmetic", "logic"]}
    data["rollout"] |= {"prompts_per_iteration": 8, "max_new_tokens": 24}
    data["eval"] = {"every": 1, "prompts": 8}
    d = tmp_path_factory.mktemp("report") / "run"
    create_or_open(d, Config.model_validate(data), 2)
    stages.prepare(d)
    for i in range(2):
        for stage in (stages.evaluate, stages.rollout, stages.verify, stages.update):
            stage(d, i)
    stages.evaluate(d, 2)
    return d


def _chromium(*args: str, page: Path) -> str:
    assert CHROMIUM, "chromium is not installed (apt-get install -y chromium)"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", *args, page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_report_numbers_come_from_the_committed_shards(run_dir: Path) -> None:
    d = collect(run_dir, responses=5)
    assert [r["iteration"] for r in d.tables["reward"]] == [0, 1]
    assert [r["iteration"] for r in d.tables["heldout"]] == [0, 1, 2]
    assert {r["task"] for r in d.tables["tasks"]} == {"arithmetic", "logic"}
    assert [r["groups"] for r in d.tables["signal"]] == [8, 8]
    assert all(r["entropy"] > 0 and r["logprob_diff_mean"] is not None for r in d.tables["updates"])
    assert len(d.tables["responses"]) == 5 and all(r["reason"] for r in d.tables["responses"])
    assert d.summary["iterations"] == "2 of 2 updated" and d.summary["task"] == "arithmetic, logic"


@needs_chromium
def test_report_renders_in_headless_chromium(run_dir: Path, tmp_path: Path) -> None:
    data = collect(run_dir)
    hostile = dict(data.tables["responses"][0], response_text=HOSTILE_HTML, reason=HOSTILE_HTML)
    data = dataclasses.replace(data, tables=data.tables | {"responses": [hostile, *data.tables["responses"]]})
    page = tmp_path / "report.html"
    page.write_text(render(data))

    dom = _chromium("--dump-dom", page=page)  # the DOM after the page's scripts ran
    for pid, *_ in PANELS:  # plotly.js drew every panel: its svg and at least one trace
        m = re.search(rf'id="plot-{pid}".*?(?=id="plot-|<h2 id="responses")', dom, re.S)
        assert m and 'class="main-svg"' in m.group(0), f"panel {pid} was not drawn"
        assert re.search(r'class="(trace scatter|trace bars|point)', m.group(0)), f"panel {pid} has no trace"
    assert "<title>rlvr report" in dom and "pwned</title>" not in dom and '<img id="pwned"' not in dom
    assert "&lt;script&gt;document.title" in dom  # the hostile text is shown as text

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1280,2600", page=page)
    img = Image.open(shot).convert("RGB")
    assert img.size == (1280, 2600)
    # plotly's default colourway: lines, markers and bars in these colours exist only if plotly drew them
    colours = {(0x63, 0x6E, 0xFA): "blue", (0xEF, 0x55, 0x3B): "red", (0x00, 0xCC, 0x96): "green"}
    counts = {name: 0 for name in colours.values()}
    for count, rgb in img.getcolors(maxcolors=1 << 20):
        if rgb in colours:
            counts[colours[rgb]] += count
    assert all(n > 500 for n in counts.values()), counts
    top, bottom = img.crop((0, 0, 1280, 1300)), img.crop((0, 1300, 1280, 2600))
    for half in (top, bottom):  # both halves of the plots area carry drawing, not a blank page
        assert len(half.getcolors(maxcolors=1 << 20)) > 50


def test_report_cli_writes_one_self_contained_page(run_dir: Path, tmp_path: Path) -> None:
    from rlvr.flows.cli import app

    before = sorted((p, p.stat().st_mtime_ns) for p in run_dir.rglob("*"))
    out = tmp_path / "r.html"
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(out), "--responses", "3"])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert not re.search(r"<script[^>]+src=", text)  # nothing to fetch: opens offline
    assert text.count('<tr><td class="short">') == 3
    assert sorted((p, p.stat().st_mtime_ns) for p in run_dir.rglob("*")) == before  # the run is only read
    res = CliRunner().invoke(app, ["report", str(tmp_path / "nope"), "--out", str(out)])
    assert res.exit_code == 2 and "no run at" in res.output
