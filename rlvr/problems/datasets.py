"""Problems from the config: shipped tasks and your own files, as rows of rlvr.schema.PROBLEMS.

`load_problems(task, prompt)` is the one entry point (prepare, the tiny model and `rlvr prompts`
use it). Each `[[task.datasets]]` entry (or `task.path`, or `task.name`'s shipped tasks) becomes
rows with the dataset's user-turn template applied to `prompt`, a train/test split (the file's,
else a stable hash-chosen held-out share) and, with `prompt.few_shot = N`, N example rows marked
split = 'few_shot'.

Own files are read by rlvr.problems.readers, every row a Record that names its file and row. Every
problem in a file is an error with its file, row and column (`DatasetError`), raised before
anything is written; so is a gold no response can match (worked solutions kept whole, see
`working_hint`, and golds the verifier never scores correct, `unscorable`).

Test: pytest tests/unit/data/test_datasets.py
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

from rlvr import data
from rlvr.config import DatasetSection, PromptSection, TaskSection
from rlvr.files import text_sha256
from rlvr.problems.readers import DatasetError, Record, read_records
from rlvr.verify.code.prompt import tests_with_prompt
from rlvr.verify.code.prompt_text import prompt_code

ALIASES: dict[str, tuple[str, ...]] = {
    "prompt": ("prompt", "question", "problem", "input", "query", "instruction"),
    "answer": ("answer", "solution", "target", "output", "label", "gold"),
    "id": ("id", "prompt_id", "uid", "task_id"),
    "split": ("split",),
    "tests": ("tests", "test"),
    "sources": ("sources", "passages", "documents", "context"),
}
SPLITS = {"train": "train", "test": "test", "validation": "test", "valid": "test", "val": "test", "dev": "test", "eval": "test"}
FEW_SHOT = "few_shot"  # the split of rows shown as worked examples (prompt.few_shot = N)


# ---- rows ---------------------------------------------------------------------------------


def resolve_columns(ds: DatasetSection, records: list[Record]) -> dict[str, str | None]:
    """Field -> column: the configured mapping, else the first alias present, else None."""
    present = list(dict.fromkeys(k for r in records for k in r.values))
    first = records[0].where if records else ds.path
    out: dict[str, str | None] = {}
    for field, aliases in ALIASES.items():
        mapped = getattr(ds.columns, field)
        if mapped is not None:
            if mapped not in present:
                raise DatasetError(
                    f"{first}: no column {mapped!r} (task.datasets.columns.{field}); the columns are {', '.join(present)}"
                )
            out[field] = mapped
        else:
            out[field] = next((a for a in aliases if a in present), None)
    for field in ("prompt", "answer"):
        if out[field] is None and not (field == "answer" and ds.verifier == "code"):
            raise DatasetError(
                f"{first}: no {field} column (looked for {', '.join(ALIASES[field])}); name it with "
                f"task.datasets.columns.{field} = 'COLUMN' (the columns are {', '.join(present)})"
            )
    return out


def _last_boxed(text: str) -> str | None:
    """The body of the last \\boxed{...} (nested braces kept), or None."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j].strip()
    return None


def extract_answer(gold: str, ds: DatasetSection) -> str | None:
    """The final answer inside a gold that carries working (answer_extract), or None when absent."""
    if ds.answer_extract == "none":
        return gold.strip()
    if ds.answer_extract == "gsm8k":  # GSM8K: "...working...\n#### 72"
        _, sep, tail = gold.rpartition("####")
        final = tail.strip().replace(",", "")  # GSM8K writes 1,000 in working but not after ####; be lenient
        return final if sep and final else None
    if ds.answer_extract == "boxed":
        return _last_boxed(gold) or None
    matches = list(re.finditer(ds.answer_regex, gold))
    if not matches:
        return None
    m = matches[-1]
    return (m.group(1) if m.re.groups else m.group(0)).strip() or None


EXTRACT_HINT = {"gsm8k": "a final '#### <answer>' line", "boxed": "a \\boxed{...}", "regex": "a match of answer_regex"}


# ---- golds no answer can match ------------------------------------------------------------
# The verifier (rlvr/verify/sql/verify.sql) compares a response's final answer (an <answer> body, a
# \boxed{} body, else its last number) with the gold, both normalised by macros.sql's norm_answer.
# A gold that normalises to nothing or to NaN/infinity scores every response wrong; one that is
# working rather than an answer scores wrong every response whose gold text is not symbolic, and
# leaves the rest to math-verify's reading of the prose: a run that trains on (nearly) nothing,
# silently. Both are refused at prepare instead, naming the row and the fix.
# Multi-line prose is not refused: the verifier compares it without whitespace ('Paris\nFrance' =
# 'Paris France'), and math-verify reads a symbolic one's last number (tests/unit/data/test_datasets.py).

GOLD_CHECKED = ("math", "exact", "retrieval")  # verifiers whose golds verify.sql compares as answers
WORKING = (  # (a sign that the gold is a worked solution, the answer_extract that cuts its answer out)
    ("####", "gsm8k"),  # GSM8K: "...working...\n#### 72"
    ("\\boxed{", "boxed"),  # MATH: "... so the answer is $\\boxed{5}$."
)
# norm_answer as verify.sql computes it, and whether no answer can ever equal it there: an empty
# one (`pred <> '' AND pred = gold`), or NaN/infinity (never correct, not_a_number), unless the gold
# looks symbolic outside task 'exact' (then math-verify decides: 'inf' = '\infty').
GOLD_FORMS = """
SELECT list_transform($answers, lambda a: {'norm': norm_answer(a), 'symbolic': looks_symbolic(norm_answer(a)),
                                           'nan': not_a_number(norm_answer(a))})
"""


def working_hint(gold: str, ds: DatasetSection) -> str | None:
    """The answer_extract a gold kept whole under answer_extract = 'none' needs, when it holds a
    worked solution (a GSM8K '#### ' line, a \\boxed{}); None when it may be an answer itself."""
    if ds.answer_extract != "none" or ds.verifier not in GOLD_CHECKED:
        return None
    return next((extract for sign, extract in WORKING if sign in gold), None)


def unscorable(answers: list[str], *, task: str) -> list[str | None]:
    """For each gold answer of a problems `task`, why no response can be scored correct against it
    by rlvr/verify/sql/verify.sql (its own macros decide), or None when one can."""
    if task not in (*GOLD_CHECKED, "arithmetic") or not answers:
        return [None] * len(answers)
    from rlvr.verify.scoring import connect  # DuckDB with the verifier's macros; only when checking

    with connect() as con:
        forms = con.execute(GOLD_FORMS, {"answers": answers}).fetchone()[0]
    out: list[str | None] = []
    for f in forms:
        if f["norm"] == "":
            out.append("normalises to nothing (whitespace, $, \\text{}, a leading + and a trailing . are dropped)")
        elif f["nan"] and (task == "exact" or not f["symbolic"]):
            out.append("is NaN or infinity, which the verifier never scores correct")
        else:
            out.append(None)
    return out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _cell(rec: Record, cols: dict[str, str | None], field: str) -> Any:
    """The row's value of a mapped field; a column other rows have but this one lacks is an error."""
    col = cols[field]
    if col is not None and col not in rec.values:
        raise DatasetError(f"{rec.where}: no column {col!r} (task.datasets.columns.{field}) in this row")
    return None if col is None else rec.values[col]


def prompt_id(name: str, ident: str) -> str:
    """A row's prompt id: its own id behind the dataset's name, which keeps a mixture's datasets
    apart; an own id that already starts with that name and '-' ('mul-22' in dataset 'mul') is kept."""
    return ident if ident.startswith(f"{name}-") else f"{name}-{ident}"


def to_rows(ds: DatasetSection, records: list[Record], *, seed: int) -> list[dict]:
    """PROBLEMS rows of one own dataset (prompt not yet templated; split None where the file has none)."""
    cols = resolve_columns(ds, records)
    rows, seen = [], {}
    for n, rec in enumerate(records):
        ident, row = _problem_row(ds, rec, cols, n)
        if (pid := row["prompt_id"]) in seen:
            raise DatasetError(
                f"{rec.where}, column {cols['id']!r}: id {ident!r} repeats {seen[pid]} (both are prompt id {pid!r}); "
                "ids must be unique"
            )
        seen[pid] = rec.where
        rows.append(row)
    if not rows:
        raise DatasetError(f"dataset {ds.label!r}: {ds.path} holds no rows")
    checked = [k for k, r in enumerate(rows) if r["answer"]]  # code golds may be empty: its tests decide
    faults = unscorable([rows[k]["answer"] for k in checked], task=ds.verifier)
    if (bad := next(((k, why) for k, why in zip(checked, faults, strict=True) if why), None)) is not None:
        k, why = bad
        raise DatasetError(
            f"dataset {ds.label!r}: {records[k].where}, column {cols['answer']!r}: the gold answer {rows[k]['answer']!r} "
            f"{why}, so every response would score wrong; fix or remove the row"
        )
    return rows


def _gold_answer(ds: DatasetSection, rec: Record, cols: dict[str, str | None]) -> tuple[str, str]:
    """(the gold as written, the answer cut out of it), or a DatasetError naming the row."""
    gold = _text(_cell(rec, cols, "answer"))
    if gold is None or not gold.strip():
        if ds.verifier != "code":
            raise DatasetError(f"{rec.where}, column {cols['answer']!r}: empty answer; every problem needs a gold answer")
        return "", ""
    if (extract := working_hint(gold, ds)) is not None:
        raise DatasetError(
            f"dataset {ds.label!r}: {rec.where}, column {cols['answer']!r}: the gold {gold[-60:]!r} is a worked "
            f"solution, not an answer (the verifier compares it whole with each response's final answer); did you mean answer_extract = {extract!r}? "
            "(to keep such text as the gold: answer_extract = 'regex', answer_regex = '(?s).+')"
        )
    answer = extract_answer(gold, ds)
    if answer is None:
        raise DatasetError(
            f"{rec.where}, column {cols['answer']!r}: answer_extract = {ds.answer_extract!r} found no "
            f"{EXTRACT_HINT[ds.answer_extract]} in {gold[-60:]!r}; fix the row or change answer_extract"
        )
    return gold, answer


def _problem_row(ds: DatasetSection, rec: Record, cols: dict[str, str | None], n: int) -> tuple[str, dict]:
    """(its own id, the record as a PROBLEMS row); every fault is a DatasetError naming the row and column."""
    prompt = _text(_cell(rec, cols, "prompt"))
    if prompt is None or not prompt.strip():
        raise DatasetError(f"{rec.where}, column {cols['prompt']!r}: empty prompt; fill it in or remove the row")
    gold, answer = _gold_answer(ds, rec, cols)
    raw_id = _cell(rec, cols, "id")
    ident = str(raw_id).strip() if raw_id is not None and str(raw_id).strip() else f"{n:06d}"
    split = None
    if cols["split"] is not None and (raw := _cell(rec, cols, "split")) is not None:
        split = SPLITS.get(str(raw).strip().lower())
        if split is None:
            raise DatasetError(f"{rec.where}, column {cols['split']!r}: split {raw!r} is not one of {', '.join(SPLITS)}")
    tests = _text(_cell(rec, cols, "tests"))
    if ds.verifier == "code" and not tests:
        raise DatasetError(
            f"{rec.where}, column {cols['tests'] or 'tests'!r}: a code problem needs tests (map them with task.datasets.columns.tests)"
        )
    if ds.verifier == "code":  # the prompt's helpers go with the tests: they call those, not the solution's
        tests = tests_with_prompt(prompt_code(prompt), tests)
    sources = _cell(rec, cols, "sources")
    if isinstance(sources, str):
        sources = [sources]
    if ds.verifier == "retrieval" and not sources:
        raise DatasetError(f"{rec.where}, column {cols['sources'] or 'sources'!r}: a retrieval problem needs sources")
    used = {c for c in cols.values() if c is not None}
    meta = {k: val for k, val in rec.values.items() if k not in used}
    if answer != gold.strip():
        meta["solution"] = gold
    return ident, {
        "prompt_id": prompt_id(ds.label, ident),
        "task": ds.verifier,  # a verifier family's name is the problems' task (rlvr.config.VERIFIERS)
        "split": split,
        "prompt": prompt,
        "answer": answer,
        "tests": tests,
        "sources": [str(s) for s in sources] if sources else None,
        "meta": json.dumps(meta, ensure_ascii=False, default=str, sort_keys=True),
        "dataset": ds.label,
    }


def _rank(seed: int, salt: str, prompt_id: str) -> str:
    """A stable pseudo-random order of ids: independent of the file's row order."""
    return text_sha256(f"{seed}/{salt}/{prompt_id}")


def assign_splits(rows: list[dict], *, test_fraction: float, seed: int) -> list[dict]:
    """Rows whose file had no split: the test_fraction of them with the lowest hash rank are 'test'."""
    free = [r for r in rows if r["split"] is None]
    n_test = round(len(free) * test_fraction)
    if test_fraction > 0 and n_test == 0 and len(free) >= 2:
        n_test = 1  # a held-out split was asked for: never an empty one
    test = {r["prompt_id"] for r in sorted(free, key=lambda r: _rank(seed, "test", r["prompt_id"]))[:n_test]}
    return [r | {"split": "test" if r["prompt_id"] in test else "train"} if r["split"] is None else r for r in rows]


def mark_few_shot(rows: list[dict], n: int, *, seed: int, name: str) -> list[dict]:
    """prompt.few_shot = n: n train rows (lowest hash rank) become split 'few_shot', the examples."""
    if n == 0:
        return rows
    train = [r for r in rows if r["split"] == "train"]
    if len(train) <= n:
        raise DatasetError(
            f"dataset {name!r}: prompt.few_shot = {n} needs more than {n} train rows, it has {len(train)}; "
            "lower prompt.few_shot or give inline turns"
        )
    shots = {r["prompt_id"] for r in sorted(train, key=lambda r: _rank(seed, FEW_SHOT, r["prompt_id"]))[:n]}
    return [r | {"split": FEW_SHOT} if r["prompt_id"] in shots else r for r in rows]


# ---- templates ----------------------------------------------------------------------------


def template_fields(row: dict) -> dict[str, Any]:
    """What a template may name: the row's meta keys (an own file's other columns), its prompt, answer,
    id (= prompt_id) and solution (the gold's full text; the answer when nothing was cut)."""
    meta = json.loads(row["meta"]) if row.get("meta") else {}
    meta = meta if isinstance(meta, dict) else {}
    return (
        {"solution": row["answer"]}
        | meta
        | {"prompt": row["prompt"], "answer": row["answer"], "id": row["prompt_id"], "prompt_id": row["prompt_id"]}
    )


def fill(template: str, row: dict, *, setting: str) -> str:
    """`template` with the row's fields; a field the row lacks is an error naming the setting."""
    fields = template_fields(row)
    try:
        return template.format_map(fields)
    except KeyError as err:
        raise DatasetError(
            f"{setting} = {template!r}: problem {row['prompt_id']!r} has no field {{{err.args[0]}}}; "
            f"its fields are {', '.join(sorted(fields))}"
        ) from None
    except (ValueError, IndexError, AttributeError) as err:
        raise DatasetError(f"{setting} = {template!r}: {err}; write {{{{ and }}}} for literal braces") from None


def default_template(ds: DatasetSection) -> str:
    """A shipped task's own user turn (its instruction), else the bare prompt."""
    if ds.shipped:
        return importlib.import_module(f"rlvr.data.{ds.shipped}").TEMPLATE
    return "{prompt}"


def template_of(ds: DatasetSection, prompt: PromptSection) -> tuple[str, str]:
    """(template, the setting it came from): the dataset's, else prompt.template, else the default."""
    if ds.template:
        return ds.template, "task.datasets.template"
    if prompt.template:
        return prompt.template, "prompt.template"
    return default_template(ds), f"{ds.label}'s default template"


# ---- the entry point ----------------------------------------------------------------------


def dataset_rows(task: TaskSection, ds: DatasetSection) -> list[dict]:
    """One dataset's rows, split (prompt not yet templated)."""
    if ds.shipped:
        return [r | {"dataset": ds.label} for r in data.one(task, ds.shipped)]
    rows = to_rows(ds, read_records(ds), seed=task.seed)
    rows = assign_splits(rows, test_fraction=ds.test_fraction, seed=task.seed)
    if not any(r["split"] == "train" for r in rows):
        raise DatasetError(f"dataset {ds.label!r}: {ds.path} has no train rows; check its split column or test_fraction")
    return rows


def verifiers(task: TaskSection) -> set[str]:
    """The verifiers of a task's datasets (a shipped one's own kind: humaneval -> code), without reading
    them: e.g. whether a run needs the code sandbox."""
    import importlib

    return {importlib.import_module(f"rlvr.data.{ds.shipped}").TASK if ds.shipped else ds.verifier for ds in task.sources()}


def load_problems(task: TaskSection, prompt: PromptSection) -> list[dict]:
    """Rows of rlvr.schema.PROBLEMS for the config: every dataset's, in order, templated and split."""
    out: list[dict] = []
    for ds in task.sources():
        rows = dataset_rows(task, ds)
        if isinstance(prompt.few_shot, int):
            rows = mark_few_shot(rows, prompt.few_shot, seed=task.seed, name=ds.label)
        template, setting = template_of(ds, prompt)
        for r in rows:
            user = fill(template, r, setting=setting)
            if not user.strip():
                raise DatasetError(f"{setting} = {template!r} renders problem {r['prompt_id']!r} as an empty prompt")
            out.append(r | {"prompt": user, "question": r["prompt"], "dataset": ds.label})
    ids = [r["prompt_id"] for r in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"prompt id {dup!r} occurs in two datasets; give the datasets distinct names (task.datasets.name)")
    return out
