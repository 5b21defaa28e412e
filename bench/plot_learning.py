"""Plot bench/learning.py's results: held-out greedy accuracy against training minutes, rlvr and TRL.

    python bench/plot_learning.py bench/results/learning-1seed-30min.json --png docs/learning.png
    python bench/plot_learning.py A.json B.json --png docs/learning-seeds.png   # several runs, one picture

Renders a self-contained HTML page (plotly.js inlined, no network; kept with --html PATH) to the
PNG with headless Chromium (Debian's `chromium`). One line per side and seed (colour: side; dash:
seed), the base accuracy dashed, the reward on the training batches in a second panel. Several
results files (e.g. one side's seeds run apart from the other's) are drawn together.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

COLORS = {"rlvr": "#1f77b4", "trl": "#d62728"}
DASHES = ("solid", "dot", "dashdot", "longdash")
NAMES = {"rlvr": "rlvr", "trl": "TRL GRPOTrainer"}


def figure(runs: list[dict]) -> go.Figure:
    """One picture of the per-seed curves of one or more bench/learning.py results."""
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("held-out greedy accuracy", "training reward per generation batch"),
        horizontal_spacing=0.08,
    )
    bases: set[float] = set()
    for results in runs:
        for seed in results["per_seed"]:
            _add_seed(fig, seed, results["settings"]["minutes"])
            bases.add(seed["figures"]["base_accuracy"])
    for base in sorted(bases):
        fig.add_hline(y=base, line_dash="dash", line_color="grey", row=1, col=1, annotation_text=f"base {base:.2f}")
    s = runs[0]["settings"]
    seeds = sorted({seed["seed"] for r in runs for seed in r["per_seed"]})
    minutes = "/".join(sorted({f"{r['settings']['minutes']:g}" for r in runs}))
    fig.update_xaxes(title_text="training minutes (evaluation and loading excluded)")
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(
        title=f"SmolLM2-135M-Instruct on {s['recipe']}: seed(s) {', '.join(map(str, seeds))}, up to {minutes} min a side, "
        f"{s['eval_prompts']} held-out problems",
        template="plotly_white",
        width=1200,
        height=480,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _add_seed(fig: go.Figure, seed: dict, minutes: float) -> None:
    """A seed's held-out curve and training reward, for each side it ran."""
    for side, run in seed["sides"].items():
        curve = run["curve"]
        label = f"{NAMES[side]} (seed {seed['seed']}, {minutes:g} min)"
        dash = DASHES[seed["seed"] % len(DASHES)]
        fig.add_trace(
            go.Scatter(
                x=[p["train_s"] / 60 for p in curve],
                y=[p["accuracy"] for p in curve],
                mode="lines+markers",
                name=label,
                line={"color": COLORS[side], "dash": dash},
                legendgroup=label,
            ),
            row=1,
            col=1,
        )
        # the reward of iteration k's batch, placed at the training time of the evaluation grid
        its = [p["iteration"] for p in curve]
        ts = [p["train_s"] for p in curve]
        per_it = (ts[-1] / its[-1]) if its[-1] else 0.0
        fig.add_trace(
            go.Scatter(
                x=[(k + 1) * per_it / 60 for k in range(len(run["train_reward"]))],
                y=run["train_reward"],
                mode="lines",
                name=label,
                line={"color": COLORS[side], "dash": dash},
                legendgroup=label,
                showlegend=False,
            ),
            row=1,
            col=2,
        )


def screenshot(html: Path, png: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("no chromium on PATH: apt-get install chromium (Debian), then run this again")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
        cmd += [f"--screenshot={png.resolve()}", "--window-size=1240,520", html.resolve().as_uri()]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, nargs="+", help="bench/learning.py results files, drawn together")
    ap.add_argument("--png", type=Path, default=Path("docs/learning.png"), help="the picture")
    ap.add_argument("--html", type=Path, help="also keep the interactive page here (~5 MB: plotly.js inlined)")
    args = ap.parse_args()
    fig = figure([json.loads(p.read_text()) for p in args.results])
    with tempfile.TemporaryDirectory() as tmp:
        html = args.html or Path(tmp) / "learning.html"
        html.parent.mkdir(parents=True, exist_ok=True)
        fig.write_html(html, include_plotlyjs=True, full_html=True, config={"displayModeBar": False})
        args.png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(html, args.png)
    print(f"wrote {args.png}" + (f" and {args.html}" if args.html else ""))


if __name__ == "__main__":
    main()
