"""`rlvr report DIR`: one self-contained HTML page that shows how a run is going.

The numbers come from the run store only: DuckDB queries over the committed shards
(rlvr.views.sql.connect_run, so an uncommitted shard never shows) and the commit records' seconds.
The plots are plotly figures; plotly.js is inlined once, so the page opens offline, from a mail
attachment or a CI artifact, with hover and zoom. Every text that comes from the run (responses,
prompts, reasons) is HTML-escaped; plotly escapes what it embeds in its own JSON.

    rlvr report runs/demo --out report.html

Tests: tests/unit/views/test_report.py (the page opened in headless Chromium).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from rlvr.config import ModelSection
from rlvr.store.folders import write_text_atomic
from rlvr.store.run import Run, open_run
from rlvr.views.sql import connect_run
from rlvr.views.status import status_rows

# One query per panel; each returns plain rows (list of dicts) ordered by iteration.
QUERIES = {
    "reward": """
        SELECT iteration, avg(reward) AS reward_mean, avg(correct::INT) AS train_accuracy, avg(format_ok::INT) AS format_ok
        FROM scores GROUP BY 1 ORDER BY 1""",
    "heldout": "SELECT iteration, avg(correct::INT) AS accuracy, count(*) AS responses FROM evals GROUP BY 1 ORDER BY 1",
    "length": """
        SELECT iteration, avg(num_response_tokens) AS mean_tokens, max(num_response_tokens) AS max_tokens,
               avg((finish_reason = 'length')::INT) AS truncated
        FROM rollouts GROUP BY 1 ORDER BY 1""",
    # an iteration with no group with signal records one step that trained nothing (sequences = 0,
    # its metrics at their 0 defaults): its policy metrics are missing (a gap in the plot), not 0
    "updates": """
        SELECT iteration, avg(entropy) FILTER (sequences > 0) AS entropy, avg(kl) FILTER (sequences > 0) AS kl,
               avg(approx_kl) FILTER (sequences > 0) AS approx_kl,
               avg(clip_frac_low) FILTER (sequences > 0) AS clip_frac_low,
               avg(clip_frac_high) FILTER (sequences > 0) AS clip_frac_high,
               max(logprob_diff_mean) AS logprob_diff_mean, max(logprob_diff_max) AS logprob_diff_max,
               max(groups_used) AS groups_used, max(groups_dropped) AS groups_dropped
        FROM updates GROUP BY 1 ORDER BY 1""",
    "signal": """
        SELECT iteration, count(DISTINCT prompt_id) AS groups,
               count(DISTINCT prompt_id) FILTER (WHERE group_std > 0) AS signal_groups
        FROM scores GROUP BY 1 ORDER BY 1""",
    "tasks": "SELECT iteration, task, avg(correct::INT) AS pass_rate, count(*) AS n FROM scores GROUP BY 1, 2 ORDER BY 2, 1",
    "eval_tasks": "SELECT iteration, task, avg(correct::INT) AS pass_rate FROM evals GROUP BY 1, 2 ORDER BY 2, 1",
    "engines": "SELECT engine, count(*) AS responses FROM rollouts GROUP BY 1 ORDER BY 1",
    "responses": """
        SELECT r.prompt_id, r.sample_idx, p.task, p.prompt, p.answer AS gold, r.response_text, r.finish_reason,
               s.extracted_answer, s.correct, s.reward, s.advantage, s.verifier, s.reason
        FROM rollouts r JOIN scores s USING (iteration, prompt_id, sample_idx) JOIN problems p USING (prompt_id)
        WHERE r.iteration = coalesce($iteration, (SELECT max(iteration) FROM scores))
        ORDER BY r.prompt_id, r.sample_idx LIMIT $limit""",  # $iteration NULL: the last scored one
}


# d3 format of percent axes: one decimal, so the ticks of small shares (clip fractions of 0.25%
# steps) read 0.2%, 0.5%, 0.8%; '.0%' rounds them all to 0% or 1%
PERCENT_TICKS = ".1%"


@dataclass(frozen=True)
class ReportData:
    run: str
    tables: dict[str, list[dict]]  # QUERIES' results by name
    stages: list[dict]  # rlvr.views.sql.status_rows: seconds per (iteration, stage)
    summary: dict[str, str]  # the header's key -> value lines


def collect(run_dir: str | Path, *, responses: int = 64) -> ReportData:
    """Every number the page shows, read from the run's committed files."""
    con = connect_run(run_dir)
    try:
        tables = {}
        for name, sql in QUERIES.items():
            params = {"limit": responses, "iteration": None} if "$limit" in sql else None
            tables[name] = con.sql(sql, params=params).to_arrow_table().to_pylist()
    finally:
        con.close()
    stages = status_rows(run_dir)
    return ReportData(str(run_dir), tables, stages, _summary(open_run(run_dir), tables, stages))


def _summary(run: Run, tables: dict[str, list[dict]], stages: list[dict]) -> dict[str, str]:
    cfg = run.config
    done = sum(r["committed"] for r in stages if r["stage"] == "update")
    held = tables["heldout"]
    return {
        "run": str(run.paths.root),
        "config hash": run.config_hash,
        "task": ", ".join([*cfg.task.names, *([cfg.task.path] if cfg.task.path else [])]) or "own datasets",
        "model": model_label(cfg.model),
        "iterations": f"{done} of {cfg.run.iterations} updated",
        "batch": f"{cfg.rollout.prompts_per_iteration} prompts x G={cfg.rollout.group_size}, "
        f"max {cfg.rollout.max_new_tokens} new tokens, T={cfg.rollout.temperature}",
        "engine": ", ".join(f"{r['engine']} ({r['responses']} responses)" for r in tables["engines"]) or "-",
        "held-out accuracy": " -> ".join(f"v{r['iteration']} {r['accuracy']:.1%}" for r in held) if held else "no evals",
        "stage seconds": f"{sum(r['seconds'] for r in stages if r['committed']):.1f}",
    }


def model_label(model: ModelSection) -> str:
    """The model a run trains: model.name (a registered model), else model.path, else the embedded tiny model."""
    return model.name or model.path or "embedded tiny model"


def _col(rows: list[dict], key: str) -> list:
    return [r[key] for r in rows]


def _lines(rows: list[dict], series: dict[str, str], *, y_title: str, percent: bool = False) -> go.Figure | None:
    """A line per (column -> legend label), x = iteration; None when there are no rows."""
    if not rows:
        return None
    fig = go.Figure()
    for key, label in series.items():
        if any(r[key] is not None for r in rows):
            fig.add_trace(go.Scatter(x=_col(rows, "iteration"), y=_col(rows, key), name=label, mode="lines+markers"))
    fig.update_yaxes(title=y_title, tickformat=PERCENT_TICKS if percent else None, rangemode="tozero")
    return fig


def _reward(d: ReportData) -> go.Figure | None:
    fig = _lines(
        d.tables["reward"],
        {"reward_mean": "mean reward (train)", "train_accuracy": "accuracy (train samples)"},
        y_title="reward / accuracy",
    )
    held = d.tables["heldout"]
    if held:
        fig = fig or go.Figure()
        # evals(i) scores policy v_i, i.e. the policy *before* iteration i's update
        fig.add_trace(
            go.Scatter(
                x=_col(held, "iteration"),
                y=_col(held, "accuracy"),
                name="held-out accuracy (policy v_i)",
                mode="lines+markers",
                line={"dash": "dash"},
            )
        )
    return fig


def _signal(d: ReportData) -> go.Figure | None:
    rows = d.tables["signal"]
    if not rows:
        return None
    x = _col(rows, "iteration")
    fig = go.Figure(
        [
            go.Bar(x=x, y=_col(rows, "signal_groups"), name="groups with reward variance"),
            go.Bar(x=x, y=[r["groups"] - r["signal_groups"] for r in rows], name="groups without (dropped)"),
        ]
    )
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="groups")
    return fig


def _per_task(d: ReportData) -> go.Figure | None:
    train, held = d.tables["tasks"], d.tables["eval_tasks"]
    if not train and not held:
        return None
    fig = go.Figure()
    for rows, label, dash in ((train, "train", "solid"), (held, "held-out", "dash")):
        for task in dict.fromkeys(_col(rows, "task")):
            mine = [r for r in rows if r["task"] == task]
            fig.add_trace(
                go.Scatter(
                    x=_col(mine, "iteration"),
                    y=_col(mine, "pass_rate"),
                    name=f"{task} ({label})",
                    mode="lines+markers",
                    line={"dash": dash},
                )
            )
    fig.update_yaxes(title="pass rate", tickformat=PERCENT_TICKS)
    return fig


def _seconds(d: ReportData) -> go.Figure | None:
    rows = [r for r in d.stages if r["committed"] and r["iteration"] != ""]
    if not rows:
        return None
    fig = go.Figure()
    for stage in dict.fromkeys(r["stage"] for r in rows):
        mine = [r for r in rows if r["stage"] == stage]
        fig.add_trace(go.Bar(x=_col(mine, "iteration"), y=_col(mine, "seconds"), name=stage))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="seconds")
    return fig


def _two(rows: list[dict], left: dict[str, str], right: dict[str, str], *, titles: tuple[str, str]) -> go.Figure | None:
    """Two small panels side by side (e.g. mean and max), x = iteration."""
    if not rows:
        return None
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles)
    for col, series in ((1, left), (2, right)):
        for key, label in series.items():
            if any(r[key] is not None for r in rows):
                fig.add_trace(
                    go.Scatter(x=_col(rows, "iteration"), y=_col(rows, key), name=label, mode="lines+markers"), row=1, col=col
                )
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(margin={"t": 50})  # room for the subplot titles under the plotly toolbar
    return fig


# (id, title, what it shows and why one watches it, builder)
PANELS = [
    (
        "reward",
        "Reward and accuracy",
        "Mean reward and accuracy of the training samples per iteration; dashed: greedy "
        "accuracy of policy v_i on the held-out split (evals, when eval.every > 0).",
        _reward,
    ),
    (
        "length",
        "Response length",
        "Mean and longest response in tokens; the share cut at rollout.max_new_tokens.",
        lambda d: _two(
            d.tables["length"],
            {"mean_tokens": "mean tokens", "max_tokens": "max tokens"},
            {"truncated": "truncated (finish = length)"},
            titles=("tokens", "truncated share"),
        ),
    ),
    (
        "entropy",
        "Policy entropy",
        "Mean per-token entropy of the policy during the update; a collapse to 0 means the policy stopped exploring.",
        lambda d: _lines(d.tables["updates"], {"entropy": "entropy"}, y_title="nats / token"),
    ),
    (
        "kl",
        "KL",
        "KL estimate to the reference v0 (when update.kl_beta > 0) and approx KL to the sampling policy.",
        lambda d: _lines(d.tables["updates"], {"kl": "KL to v0", "approx_kl": "approx KL to sampler"}, y_title="nats / token"),
    ),
    (
        "clip",
        "Clip fractions",
        "Share of tokens clipped at 1 - eps_low (negative advantage) and 1 + eps_high (positive).",
        lambda d: _lines(
            d.tables["updates"],
            {"clip_frac_low": "clipped low", "clip_frac_high": "clipped high"},
            y_title="share of tokens",
            percent=True,
        ),
    ),
    (
        "signal",
        "Groups with signal",
        "Groups whose rewards differ carry a GRPO gradient; groups with equal rewards are dropped by the update.",
        _signal,
    ),
    (
        "mismatch",
        "Engine / trainer logprob mismatch",
        "|rollout logprob - trainer logprob| of the same tokens before any "
        "step: large values mean the sampler and the trainer disagree (see update.tis_cap).",
        lambda d: _two(d.tables["updates"], {"logprob_diff_mean": "mean"}, {"logprob_diff_max": "max"}, titles=("mean", "max")),
    ),
    ("tasks", "Pass rate per task", "Solid: training samples; dashed: held-out evals.", _per_task),
    ("seconds", "Seconds per stage", "Wall seconds of each committed stage (commit records).", _seconds),
]


def _figure_html(fig: go.Figure | None, div_id: str) -> str:
    if fig is None:
        return '<p class="empty">no committed data yet</p>'
    top = fig.layout.margin.t or 30
    fig.update_layout(
        height=320, margin={"l": 60, "r": 20, "t": top, "b": 40}, template="plotly_white", legend={"orientation": "h", "y": -0.2}
    )
    fig.update_xaxes(title="iteration", dtick=1)
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"plot-{div_id}", config={"displaylogo": False})


RESPONSE_COLUMNS = [
    "prompt_id",
    "sample_idx",
    "task",
    "prompt",
    "gold",
    "response_text",
    "extracted_answer",
    "correct",
    "reward",
    "advantage",
    "verifier",
    "reason",
]
LONG_TEXT = {"prompt", "response_text", "reason", "gold", "extracted_answer"}  # wrapped; the other columns stay on one line


def _cell(column: str, value: object) -> str:
    if value is None:
        return '<td class="null">NULL</td>'
    if isinstance(value, bool):
        return f'<td class="{"ok" if value else "bad"}">{"yes" if value else "no"}</td>'
    if isinstance(value, float):
        return f'<td class="num">{value:.3g}</td>'
    return f'<td class="{"text" if column in LONG_TEXT else "short"}">{html.escape(str(value))}</td>'


def responses_table(rows: list[dict]) -> str:
    """The last iteration's sampled responses with their verdicts, every value HTML-escaped."""
    if not rows:
        return '<p class="empty">no scored iteration yet</p>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in RESPONSE_COLUMNS)
    body = "\n".join("<tr>" + "".join(_cell(c, r[c]) for c in RESPONSE_COLUMNS) + "</tr>" for r in rows)
    return f'<table class="responses"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>'


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin: 1.2em 0 0.2em; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 1.5em; }
.panel p.caption { color: #555; font-size: 0.85em; margin: 0; }
p.empty { color: #999; font-style: italic; height: 60px; }
table.responses { border-collapse: collapse; font-size: 0.8em; width: 100%; }
table.responses td, table.responses th { border: 1px solid #ddd; padding: 2px 4px; vertical-align: top; text-align: left; }
table.responses td.text { white-space: pre-wrap; max-width: 28em; overflow-wrap: anywhere; }
table.responses td.short, table.responses td.num { white-space: nowrap; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; font-size: 0.9em; }
dl.summary dt { color: #555; } dl.summary dd { margin: 0; }
td.ok { background: #e6f4ea; } td.bad { background: #fce8e6; } td.null { color: #999; }
"""


def render(d: ReportData) -> str:
    """The whole page as one string (plotly.js inlined: ~4.8 MB, no network needed)."""
    panels = "\n".join(
        f'<div class="panel" id="panel-{pid}"><h2>{html.escape(title)}</h2><p class="caption">{html.escape(caption)}</p>'
        f"{_figure_html(build(d), pid)}</div>"
        for pid, title, caption, build in PANELS
    )
    summary = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>" for k, v in d.summary.items())
    last = max((r["iteration"] for r in d.tables["reward"]), default=None)
    n = len(d.tables["responses"])
    heading = "Sampled responses" + ("" if last is None else f" of iteration {last} (first {n}, by prompt and sample)")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rlvr report: {html.escape(d.run)}</title>
<style>{STYLE}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head><body>
<h1>rlvr report: {html.escape(d.run)}</h1>
<dl class="summary">{summary}</dl>
<div class="grid">
{panels}
</div>
<h2 id="responses">{html.escape(heading)}</h2>
{responses_table(d.tables["responses"])}
</body></html>
"""


def write_report(run_dir: str | Path, out: str | Path, *, responses: int = 64) -> Path:
    """Write the page for run_dir to `out` (atomically: a reader never sees half a page)."""
    out = Path(out)
    write_text_atomic(out, render(collect(run_dir, responses=responses)))
    return out


# ---- per-iteration summaries (what the Prefect artifacts show) --------------------------------

SUMMARY_COLUMNS = [
    "iteration",
    "reward_mean",
    "train_accuracy",
    "heldout_accuracy",
    "signal_groups",
    "groups",
    "mean_tokens",
    "truncated",
    "entropy",
    "kl",
    "clip_frac_low",
    "clip_frac_high",
    "logprob_diff_mean",
    "seconds",
]


def iteration_rows(d: ReportData) -> list[dict]:
    """One row of headline metrics per iteration with scores (SUMMARY_COLUMNS); held-out accuracy
    is that of policy v_i, the policy the iteration sampled with."""
    by_iter: dict[int, dict] = {}
    for name in ("reward", "signal", "length", "updates"):
        for r in d.tables[name]:
            by_iter.setdefault(r["iteration"], {}).update(r)
    held = {r["iteration"]: r["accuracy"] for r in d.tables["heldout"]}
    secs: dict[int, float] = {}
    for r in d.stages:
        if r["committed"] and r["iteration"] != "":
            secs[r["iteration"]] = secs.get(r["iteration"], 0.0) + r["seconds"]
    rows = []
    for i in sorted(k for k, r in by_iter.items() if "reward_mean" in r):
        r = by_iter[i] | {"heldout_accuracy": held.get(i), "seconds": secs.get(i)}
        rows.append({c: (round(v, 4) if isinstance(v := r.get(c), float) else v) for c in SUMMARY_COLUMNS})
    return rows


def iteration_markdown(d: ReportData, iteration: int) -> str:
    """A short markdown summary of one iteration (a Prefect artifact, or anywhere markdown shows)."""
    row = next((r for r in iteration_rows(d) if r["iteration"] == iteration), None)
    if row is None:
        return f"# {d.summary['run']}: iteration {iteration}\n\nnothing scored yet"

    def fmt(v: object) -> str:
        return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = [
        f"# {d.summary['run']}: iteration {iteration}",
        "",
        f"task {d.summary['task']}, {d.summary['batch']}, {d.summary['iterations']}",
        "",
        "| metric | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {fmt(v)} |" for k, v in row.items() if k != "iteration"]
    return "\n".join(lines) + "\n"
