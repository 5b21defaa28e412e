"""`rlvr report`'s page without a run: text from the run stays text (HTML-escaped), the header names
the model, small shares read apart, an iteration that trained nothing has no entropy or KL, a run
with nothing committed has a page. On a real run in headless Chromium: tests/integration/test_report_run.py."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest

from rlvr.checks.start import create_or_open
from rlvr.views.report import PANELS, responses_table, write_report
from tests.helpers.rows import HOSTILE_HTML

pytestmark = pytest.mark.slow


def test_responses_table_escapes_everything_from_the_run() -> None:
    row = {
        c: HOSTILE_HTML
        for c in ("prompt_id", "task", "prompt", "gold", "response_text", "extracted_answer", "verifier", "reason")
    }
    page = responses_table([row | {"sample_idx": 0, "correct": True, "reward": 1.0, "advantage": None}])
    assert "<script>" not in page and "<img" not in page and html.escape(HOSTILE_HTML) in page
    assert 'class="ok">yes<' in page and 'class="null">NULL<' in page


def test_report_of_a_run_with_nothing_committed(tmp_path: Path) -> None:
    create_or_open(tmp_path / "run", None, None)
    text = write_report(tmp_path / "run", tmp_path / "r.html").read_text()
    assert text.count("no committed data yet") == len(PANELS) and "no scored iteration yet" in text


def test_the_header_names_the_model_the_run_trains() -> None:
    from rlvr.config import ModelSection
    from rlvr.views.report import model_label

    assert model_label(ModelSection(name="smollm2-135m-instruct")) == "smollm2-135m-instruct"
    assert model_label(ModelSection(path="/models/qwen")) == "/models/qwen"
    assert model_label(ModelSection()) == "embedded tiny model"


def test_percent_ticks_of_small_shares_read_apart() -> None:
    from rlvr.views.report import PERCENT_TICKS

    clip = next(build for pid, *_, build in PANELS if pid == "clip")
    rows = [{"iteration": i, "clip_frac_low": v, "clip_frac_high": v / 2} for i, v in enumerate([0.01, 0.0075, 0.005])]
    fig = clip(dataclasses.replace(_no_data(), tables=_no_data().tables | {"updates": rows}))
    assert fig.layout.yaxis.tickformat == PERCENT_TICKS
    ticks = [0.0, 0.0025, 0.005, 0.0075, 0.01]  # plotly's ticks for that range; d3's '.1%' formats as Python's
    assert len({format(t, PERCENT_TICKS) for t in ticks}) == len(ticks)


def _no_data():
    from rlvr.views.report import QUERIES, ReportData

    return ReportData("run", {name: [] for name in QUERIES}, [], {})


def test_an_iteration_that_trained_nothing_has_no_entropy_or_kl() -> None:
    """No group with signal: the update records one step with sequences = 0 and its metrics at their
    0 defaults; the report shows the policy metrics as missing (a gap), not as 0."""
    import duckdb
    import pyarrow as pa

    from rlvr.schema import UPDATES, StepMetrics
    from rlvr.views.report import QUERIES

    trained = StepMetrics(iteration=0, global_step=0, entropy=0.5, kl=0.02, approx_kl=0.01, clip_frac_low=0.1, sequences=8)
    updates = pa.Table.from_pylist(  # noqa: F841 (read by duckdb by name)
        [dataclasses.asdict(trained), dataclasses.asdict(StepMetrics(iteration=1, global_step=1))], schema=UPDATES
    )
    rows = duckdb.sql(QUERIES["updates"]).to_arrow_table().to_pylist()
    assert [r["iteration"] for r in rows] == [0, 1]
    assert (rows[0]["entropy"], rows[0]["kl"], rows[0]["clip_frac_low"]) == (0.5, 0.02, 0.1)
    for key in ("entropy", "kl", "approx_kl", "clip_frac_low", "clip_frac_high"):
        assert rows[1][key] is None, key
    entropy = next(build for pid, *_, build in PANELS if pid == "entropy")
    fig = entropy(dataclasses.replace(_no_data(), tables=_no_data().tables | {"updates": rows}))
    assert list(fig.data[0].y) == [0.5, None]
