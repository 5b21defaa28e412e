"""Benchmark: the SQL verification tier against a per-row math-verify loop, on the same rows.

    python bench/verify.py                  # 1,000,000 responses, math-verify on 2,000 of them
    python bench/verify.py --rows 200000 --sample 500 --repeats 1   # quicker

Builds synthetic math responses in mixed formats (<answer> tags, \\boxed{}, last number, thousands
commas, currency, percent, fractions, trailing zeros, unicode minus, wrong answers, no answer)
with their problems as Parquet in a temp dir, then times, alternating sides each repeat:
  - sql:        Parquet in -> rlvr.verify.scoring (SQL tier + the group-stats pass) -> scores Parquet out
  - scan floor: the same Parquet columns read + a same-sized scores file written, no verification
  - bare:       a verifier with no rules (a tag, box or last number by one split or regex, string equality with
                the gold, the join, the same write): the ceiling any verifier of these rows can reach here
  - math-verify: `verify(parse(gold), parse(pred))` in a plain loop on a sample of the same rows
  - symbolic:   --symbolic-rows responses to symbolic golds (radicals, pi, polynomials, intervals, sets)
                written right, reordered, unsimplified, in another case, approximated or wrong: SQL pass 1
                only (rlvr.verify.scoring._decide_in_sql, the form rules of issue 19), beside the same pass
                on the numeric rows, and the share of rows SQL decides before math-verify
  - code:       HumanEval's 164 canonical solutions through the sandbox tier (rlvr.verify.code.check_many,
                one bubblewrap sandbox per program, as many at a time as cores): programs/s, all must pass
                (--no-code skips it; the sandbox needs root)
and prints `key: value` lines, written with the machine, versions and settings to
bench/results/verify.json (the bench conventions are in bench/README.md). Best of the repeats is reported (and the
SQL median): other work on a shared machine only ever slows a repeat down.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from machine import write_result  # bench/machine.py

from rlvr.config import VerifySection
from rlvr.schema import PARQUET_COMPRESSION, PROBLEMS, ROLLOUTS, SCORES
from rlvr.store.commit import write_table
from rlvr.verify import score_with_stats, scoring

RESULTS = Path(__file__).parent / "results" / "verify.json"

FILLER = [
    "Let me think step by step. ",
    "First we add the two amounts and then subtract what was spent. ",
    "We have {a} items and buy {b} more, so {a} + {b} = {c}. ",
    "Multiplying {a} by 3 gives {d}, which is too much, so we go back. ",
    "Checking the units: everything is in the same currency. ",
]


def _gold(rng: random.Random) -> tuple[str, float]:
    """A problem's ground truth as the dataset would store it, and its value."""
    kind = rng.random()
    if kind < 0.6:
        v = rng.randint(-50, 5000)
        return str(v), float(v)
    if kind < 0.8:
        v = rng.randint(1000, 9_999_999)
        return str(v), float(v)
    if kind < 0.9:
        v = rng.randint(1, 999) / 4
        return f"{v:g}", v
    den = rng.choice([2, 3, 4, 5, 8])
    num = rng.randint(1, 3 * den)
    return f"{num}/{den}", num / den


def _written(rng: random.Random, gold: str, v: float) -> str:
    """How a response writes the value `v` (correct) in one of the formats the SQL normalises."""
    kind = rng.randrange(8)
    if kind == 0 and v == int(v) and abs(v) >= 1000:
        return f"{int(v):,}"  # thousands commas
    if kind == 1 and v >= 0:
        return rng.choice(["$", "€", "£"]) + (f"{v:,.2f}" if v != int(v) else f"{int(v):,}")
    if kind == 2:
        return f"{v:.2f}"  # trailing zeros: 42.00, 2.50
    if kind == 3 and v < 0:
        return "\u2212" + f"{-v:g}"  # unicode minus
    if kind == 4 and "/" in gold:
        return f"{v:g}"  # 3/4 written as 0.75
    if kind == 5 and v == int(v) and 0 < v <= 100:
        return f"{int(v)}%"
    if kind == 6 and v > 0:
        return f"+{v:g}"
    return gold


def _rollouts(prompt_ids: list[str], sample_idx: list[int], texts: list[str]) -> pa.Table:
    """Rollout rows (iteration 0, one token each) in ROLLOUTS' schema for the given responses."""
    n = len(texts)
    one = pa.array([[1]] * n, pa.list_(pa.int32()))
    return pa.table(
        {
            "iteration": [0] * n,
            "prompt_id": prompt_ids,
            "sample_idx": sample_idx,
            "prompt_token_ids": one,
            "response_token_ids": one,
            "response_logprobs": pa.array([[-0.5]] * n, pa.list_(pa.float32())),
            "response_text": texts,
            "num_response_tokens": [len(t) // 4 for t in texts],
            "finish_reason": ["stop"] * n,
            "policy_version": [0] * n,
            "staleness": [0] * n,
            "engine": ["transformers"] * n,
            "temperature": [1.0] * n,
            "seed": [0] * n,
            "model": [None] * n,
        },
        schema=ROLLOUTS,
    )


def make_inputs(folder: Path, *, rows: int, group_size: int, seed: int, row_group_rows: int) -> list[tuple[str, str]]:
    """Write problems.parquet and rollouts.parquet; returns [(gold, response)] for the sample loop."""
    rng = random.Random(seed)
    n_prompts = rows // group_size
    golds = [_gold(rng) for _ in range(n_prompts)]
    pids = [f"p{k:07d}" for k in range(n_prompts)]
    problems = pa.table(
        {
            "prompt_id": pids,
            "task": ["synthetic_math"] * n_prompts,
            "split": ["train"] * n_prompts,
            "prompt": ["How much?"] * n_prompts,
            "question": [None] * n_prompts,
            "answer": [g for g, _ in golds],
            "tests": [None] * n_prompts,
            "sources": [None] * n_prompts,
            "meta": [None] * n_prompts,
            "dataset": [None] * n_prompts,
        },
        schema=PROBLEMS,
    )
    pq.write_table(problems, folder / "problems.parquet", compression=PARQUET_COMPRESSION)
    texts, prompt_ids, sample_idx = [], [], []
    for k in range(n_prompts):
        gold, v = golds[k]
        for s in range(group_size):
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            body = "".join(rng.choice(FILLER) for _ in range(rng.randint(1, 4))).format(a=a, b=b, c=a + b, d=3 * a)
            ans = _written(rng, gold, v) if rng.random() < 0.55 else str(rng.randint(-50, 5000))  # right or wrong
            fmt = rng.random()
            if fmt < 0.55:
                text = f"{body}<answer>{ans}</answer>"
            elif fmt < 0.70:
                text = f"{body}So the answer is $\\boxed{{{ans}}}$."
            elif fmt < 0.90:
                text = f"{body}The answer is {ans}."
            else:
                text = f"{body}I am not sure how to finish this."  # no answer beyond the filler numbers
            texts.append(text)
            prompt_ids.append(pids[k])
            sample_idx.append(s)
    rollouts = _rollouts(prompt_ids, sample_idx, texts)
    pq.write_table(rollouts, folder / "rollouts.parquet", compression=PARQUET_COMPRESSION, row_group_size=row_group_rows)
    return [(golds[k // group_size][0], texts[k]) for k in range(len(texts))]


def _symbolic_gold(rng: random.Random) -> tuple[str, list[tuple[str, bool]]]:
    """A symbolic gold and answers to it, each with whether it is right: as the gold, reordered or
    rewritten (right); unsimplified, echoed, in another case, approximated, another set shape, wrong."""
    a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7, 10, 11])
    kind = rng.randrange(5)
    if kind == 0:
        gold = f"{a}\\sqrt{{{b}}}"
        return gold, [
            (gold, True),
            (f"\\sqrt{{{a * a * b}}}", True),
            (f"\\sqrt{{{b}}}\\cdot {a}", True),
            (f"\\frac{{{2 * a}\\sqrt{{{b}}}}}{{2}}", False),
            (f"{a * b**0.5:.6f}", False),
            (f"{a + 1}\\sqrt{{{b}}}", False),
        ]
    if kind == 1:
        gold = f"\\frac{{{a}\\pi}}{{{b + a}}}" if a % 2 and (b + a) % a else f"\\frac{{\\pi}}{{{b}}}"
        return gold, [(gold, True), (gold.replace("\\pi", "\\Pi"), False), (f"{gold}+\\sin 0", False), (gold + "+1", False)]
    if kind == 2:
        gold = f"x^2+{a}x+{b}"
        return gold, [
            (gold, True),
            (f"{b}+{a}x+x^2", True),
            (f"X^2+{a}x+{b}", False),
            (f"x^2+{a}x+{b}+x-x", False),
            (f"x^2+{a + 1}x+{b}", False),
        ]
    if kind == 3:
        gold = f"({a}, {a + b})"
        return gold, [
            (gold, True),
            (f"{a} < x < {a + b}", True),
            (f"\\{{{a}, {a + b}\\}}", False),
            (f"{a}, {a + b}", False),
            (f"[{a}, {a + b}]", False),
        ]
    gold = f"\\{{{a}, {a + b}\\}}"
    return gold, [(gold, True), (f"\\{{{a + b}, {a}\\}}", True), (f"({a}, {a + b})", False), (f"\\{{{a}, {a + b + 1}\\}}", False)]


def make_symbolic(folder: Path, *, rows: int, group_size: int, seed: int) -> None:
    """symbolic/problems.parquet and symbolic/rollouts.parquet: `rows` tagged answers to symbolic golds."""
    rng = random.Random(seed)
    (folder / "symbolic").mkdir()
    problems, texts, pids, idx = [], [], [], []
    for k in range(rows // group_size):
        gold, answers = _symbolic_gold(rng)
        problems.append({"prompt_id": f"s{k:07d}", "task": "math", "split": "train", "prompt": "Simplify.", "answer": gold})
        for s in range(group_size):
            texts.append(f"{rng.choice(FILLER[:2])}<answer>{rng.choice(answers)[0]}</answer>")
            pids.append(f"s{k:07d}"), idx.append(s)
    pq.write_table(pa.Table.from_pylist(problems, schema=PROBLEMS), folder / "symbolic" / "problems.parquet")
    pq.write_table(_rollouts(pids, idx, texts), folder / "symbolic" / "rollouts.parquet")


def run_pass1(folder: Path, cfg: VerifySection) -> tuple[float, dict[str, int]]:
    """SQL pass 1 alone (extraction, the form rules, numeric and exact decisions) on folder's rows:
    seconds, and rows by verifier ('undecided': left to math-verify)."""
    con = scoring.connect()
    files = {"rollouts": [str(folder / "rollouts.parquet")], "problems": [str(folder / "problems.parquet")]}
    t = time.perf_counter()
    scoring._decide_in_sql(con, files, cfg)
    seconds = time.perf_counter() - t
    return seconds, dict(con.execute(scoring.COUNT_BY_VERIFIER).fetchall())


def run_sql(folder: Path, cfg: VerifySection) -> tuple[float, dict]:
    t = time.perf_counter()
    table, stats = score_with_stats([folder / "rollouts.parquet"], [folder / "problems.parquet"], cfg)
    write_table(table, SCORES, folder / "scores.parquet")  # as the verify stage writes its shard
    return time.perf_counter() - t, stats


SCAN_FLOOR = """
COPY (
    SELECT iteration, prompt_id, sample_idx, 'synthetic_math' AS task, prompt_id AS extracted_answer,
           'answer_tag' AS extraction, true AS format_ok, true AS correct, 1.0::DOUBLE AS reward,
           'sql_numeric' AS verifier, prompt_id AS reason, length(response_text) AS group_size,
           0.5::DOUBLE AS group_mean, 0.5::DOUBLE AS group_std, 0.0::DOUBLE AS advantage
    FROM read_parquet($rollouts)
) TO '{out}' (FORMAT parquet, COMPRESSION zstd)
"""


BARE = """
COPY (
    WITH e AS (
        SELECT iteration, prompt_id, sample_idx,
            CASE WHEN contains(response_text, '<answer>') THEN split_part(split_part(response_text, '<answer>', 2), '</answer>', 1)
                 WHEN contains(response_text, '\\boxed{') THEN regexp_extract(response_text, '\\\\boxed\\{([^{}]*)\\}', 1)
                 ELSE regexp_extract(response_text, '(-?\\d+(?:\\.\\d+)?)\\D*$', 1) END AS ex
        FROM read_parquet($rollouts)
    )
    SELECT iteration, prompt_id, sample_idx, 'synthetic_math' AS task, ex AS extracted_answer, 'answer_tag' AS extraction,
           true AS format_ok, ex = answer AS correct, CASE WHEN ex = answer THEN 1.0 ELSE 0.0 END AS reward,
           'sql_numeric' AS verifier, CASE WHEN ex = answer THEN 'correct: ' ELSE 'wrong: got ' END || ex || ', ' || answer AS reason,
           8 AS group_size, 0.5::DOUBLE AS group_mean, 0.5::DOUBLE AS group_std, 0.0::DOUBLE AS advantage
    FROM e JOIN read_parquet($problems) USING (prompt_id)
) TO '{out}' (FORMAT parquet, COMPRESSION zstd)
"""


def run_bare(folder: Path) -> float:
    """A verifier with no rules, the ceiling for any: one split or regex per row (tag, box or last number), string
    equality with the gold, the join and a scores-shaped write; no normalisation, hedges, context or group pass."""
    con = duckdb.connect()
    t = time.perf_counter()
    files = {"rollouts": str(folder / "rollouts.parquet"), "problems": str(folder / "problems.parquet")}
    con.execute(BARE.replace("{out}", str(folder / "bare.parquet")), files)  # (the regexes hold braces: no format())
    return time.perf_counter() - t


def run_scan_floor(folder: Path) -> float:
    """Same read, same-sized scores-shaped write, no extraction, no join, no verification."""
    con = duckdb.connect()
    t = time.perf_counter()
    out = folder / "floor.parquet"
    # COPY TO takes no bound parameter for its file name; the name is ours, not input data.
    con.execute(SCAN_FLOOR.format(out=out), {"rollouts": str(folder / "rollouts.parquet")})
    return time.perf_counter() - t


def run_mathverify(sample: list[tuple[str, str]]) -> float:
    """The per-row incumbent: math-verify parses the gold and the whole response, then compares."""
    from math_verify import parse, verify

    t = time.perf_counter()
    for gold, text in sample:
        verify(parse(f"${gold}$"), parse(text))
    return time.perf_counter() - t


def run_code() -> tuple[float, int, int]:
    """HumanEval's canonical solutions (prompt + solution) against their tests: seconds, passed, total."""
    from rlvr.data import humaneval

    from rlvr.verify import code as sandbox

    rows = humaneval.generate()
    checks = [sandbox.make_check(r["answer"], r["tests"]) for r in rows]
    t = time.perf_counter()
    verdicts = sandbox.check_many(checks)
    return time.perf_counter() - t, sum(v.passed for v in verdicts), len(verdicts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=2_000, help="rows for the math-verify loop")
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--row-group-rows", type=int, default=131_072, help="Parquet row group of the rollouts file")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-code", action="store_true", help="skip the HumanEval sandbox throughput")
    ap.add_argument("--symbolic-rows", type=int, default=200_000, help="responses to symbolic golds (SQL pass 1 only)")
    args = ap.parse_args()
    cfg = VerifySection()
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-verify-") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        pairs = make_inputs(
            folder, rows=args.rows, group_size=args.group_size, seed=args.seed, row_group_rows=args.row_group_rows
        )
        build_s = time.perf_counter() - t
        sample = random.Random(args.seed + 1).sample(pairs, min(args.sample, len(pairs)))
        make_symbolic(folder, rows=args.symbolic_rows, group_size=args.group_size, seed=args.seed)
        sql_s, floor_s, bare_s, mv_s, stats, p1_s, sym_s, sym_by = [], [], [], [], {}, [], [], {}
        for _ in range(args.repeats):  # alternate the sides: these machines drift
            s, stats = run_sql(folder, cfg)
            sql_s.append(s)
            floor_s.append(run_scan_floor(folder))
            bare_s.append(run_bare(folder))
            mv_s.append(run_mathverify(sample))
            p1_s.append(run_pass1(folder, cfg)[0])
            s, sym_by = run_pass1(folder / "symbolic", cfg)
            sym_s.append(s)
        n = len(pairs)
        scored = pq.read_table(folder / "scores.parquet", columns=["correct", "verifier"])
    code = None if args.no_code else run_code()
    sql_rps = n / min(sql_s)
    mv_rps = len(sample) / min(mv_s)
    figures = {
        "rows": n,
        "sql_rows_per_s": round(sql_rps),
        "sql_s": round(min(sql_s), 3),
        "mathverify_rows_per_s": round(mv_rps, 1),
        "mathverify_sample_rows": len(sample),
        "ratio": round(sql_rps / mv_rps, 1),
        "sql_rows_per_s_median": round(n / statistics.median(sql_s)),
        "scan_floor_rows_per_s": round(n / min(floor_s)),
        "sql_vs_floor_ratio": round((n / min(floor_s)) / sql_rps, 2),
        # the ceiling: a verifier with no rules (run_bare), and what the rules cost against it
        "bare_rows_per_s": round(n / min(bare_s)),
        "sql_vs_bare_ratio": round((n / min(bare_s)) / sql_rps, 2),
        "correct_fraction": round(sum(scored["correct"].to_pylist()) / n, 4),
        "undecided_rows": stats.get("undecided", 0),
        "verifier_errors": stats.get("verifier_errors", 0),
        "mean_response_chars": round(sum(len(t) for _, t in pairs) / n, 1),
        "build_inputs_s": round(build_s, 1),
        # SQL pass 1 alone: numeric rows, and rows with symbolic golds (the form rules run on these)
        "sql_pass1_rows_per_s": round(n / min(p1_s)),
        "symbolic_rows": sum(sym_by.values()),
        "sql_pass1_symbolic_rows_per_s": round(sum(sym_by.values()) / min(sym_s)) if sym_by else None,
        "symbolic_decided_in_sql_fraction": round(1 - sym_by.get("undecided", 0) / sum(sym_by.values()), 4) if sym_by else None,
    }
    if code is not None:
        figures |= {"code_programs_per_s": round(code[2] / code[0], 1), "code_passed": code[1], "code_programs": code[2]}
    write_result(
        args.out,
        figures,
        all_runs_s={
            "sql": sql_s,
            "scan_floor": floor_s,
            "bare": bare_s,
            "mathverify": mv_s,
            "sql_pass1": p1_s,
            "sql_pass1_symbolic": sym_s,
            "code": code and code[0],
        },
        versions={p: version(p) for p in ("duckdb", "pyarrow", "math-verify", "sympy")},
        settings=vars(args)
        | {
            "verify": cfg.model_dump(),
            "duckdb_threads": duckdb.sql("SELECT current_setting('threads')").fetchall()[0][0],
        },
    )


if __name__ == "__main__":
    main()
