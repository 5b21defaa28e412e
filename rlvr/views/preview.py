"""`rlvr prompts CONFIG_OR_RUN`: the first prompts exactly as the model gets them.

A run folder uses its own problems and policy v0's tokenizer once prepared (the files checked
against prepare's record); a config loads its datasets and the configured model's tokenizer
(model.path, the prepared model.name, or the embedded tiny model, built if needed: the folder
prepare copies, rlvr.models.tiny.base_model). The ids come from rlvr.problems.prompts.prompt_ids, the function
rollout calls, so the preview cannot drift from what rollout renders.

Test: pytest tests/integration/test_prompt_path.py
"""

from __future__ import annotations

from pathlib import Path


def preview(target: str | Path, n: int = 3, split: str = "train") -> list[dict]:
    """The first n prompts (by prompt_id) of one split: prompt_id, dataset, split, text (the ids
    decoded, special tokens included), tokens (their count) and ids."""
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from rlvr.config import load_config
    from rlvr.models.tiny import base_model
    from rlvr.problems.datasets import load_problems
    from rlvr.problems.prompts import prompt_ids
    from rlvr.schema import PREPARE
    from rlvr.store.commit import fetch_policy
    from rlvr.store.records import verified_record
    from rlvr.store.run import open_run

    target = Path(target)
    rows, tok_dir = None, None
    if target.is_dir():
        run = open_run(target)
        cfg = run.config
        if (rec := verified_record(run.paths, PREPARE, None)) is not None:
            rows = pq.read_table(rec.parquet_files(run.paths.root)).to_pylist()
            tok_dir = fetch_policy(run.paths, 0)
    else:
        cfg = load_config(target)
    if rows is None:
        rows = load_problems(cfg.task, cfg.prompt)
        tok_dir = base_model(cfg)
    tok = AutoTokenizer.from_pretrained(tok_dir)
    ids = prompt_ids(tok, rows, cfg.prompt, split)
    of = {r["prompt_id"]: r for r in rows}
    return [
        {
            "prompt_id": pid,
            "dataset": of[pid].get("dataset"),
            "split": split,
            "text": tok.decode(ids[pid]),
            "tokens": len(ids[pid]),
            "ids": ids[pid],
        }
        for pid in sorted(ids)[:n]
    ]
