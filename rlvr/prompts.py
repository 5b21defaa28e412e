"""Prompts as chat turns: `[prompt]` system turn, few-shot examples, then the problem's user turn.

The user turn is the problems' `prompt` column (the dataset's template already applied by
rlvr.datasets at prepare). Few-shot examples are inline turns (prompt.few_shot = [...]) or the
rows of the problem's own dataset whose split is 'few_shot' (prompt.few_shot = N), each a user
turn and an assistant turn (prompt.few_shot_response). rlvr.sampler turns the messages into text
and token ids through the model's chat template; rollout, evaluate, the tiny model's warm-up and
`rlvr prompts` all build their prompts here, so they agree token for token.

Test: pytest tests/test_datasets.py -k prompt
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from rlvr.config import PromptSection
from rlvr.datasets import FEW_SHOT, fill
from rlvr.sampler import Messages


def example_turns(rows: list[dict], prompt: PromptSection) -> dict[str | None, Messages]:
    """dataset -> its few-shot turns (rows of split 'few_shot', in prompt_id order); inline turns
    are everyone's (key None)."""
    if isinstance(prompt.few_shot, list):
        return {None: [t.model_dump() for t in prompt.few_shot]}
    shots: dict[str | None, Messages] = defaultdict(list)
    for r in sorted((r for r in rows if r["split"] == FEW_SHOT), key=lambda r: r["prompt_id"]):
        answer = fill(prompt.few_shot_response, r, setting="prompt.few_shot_response")
        shots[r.get("dataset")] += [{"role": "user", "content": r["prompt"]}, {"role": "assistant", "content": answer}]
    return dict(shots)


def messages(row: dict, prompt: PromptSection, shots: dict[str | None, Messages]) -> Messages:
    """The chat turns of one problem row."""
    system = [{"role": "system", "content": prompt.system}] if prompt.system else []
    examples = shots.get(None) or shots.get(row.get("dataset"), [])
    return [*system, *examples, {"role": "user", "content": row["prompt"]}]


def conversations(rows: list[dict], prompt: PromptSection, split: str) -> dict[str, Messages]:
    """prompt_id -> chat turns, for the rows of one split ('train' | 'test'); `rows` are all of a
    run's problems (the few-shot rows among them)."""
    shots = example_turns(rows, prompt)
    return {r["prompt_id"]: messages(r, prompt, shots) for r in rows if r["split"] == split}


def preview(target: str | Path, n: int = 3, split: str = "train") -> list[dict]:
    """The first n prompts of a config file or a run folder exactly as the model gets them: text
    (after the chat template) and token count. A run uses its own problems and policy v0's tokenizer
    once prepared; a config loads its datasets and the model's tokenizer (the embedded tiny model
    is built if needed)."""
    from transformers import AutoTokenizer

    from rlvr.config import load_config
    from rlvr.datasets import load_problems
    from rlvr.run import open_run
    from rlvr.sampler import render_prompt_ids, render_prompt_text
    from rlvr.schema import PREPARE
    from rlvr.store import read_record
    from rlvr.tiny import ensure_tiny_model

    target = Path(target)
    rows, tok_dir = None, None
    if target.is_dir():
        run = open_run(target)
        cfg = run.config
        if (rec := read_record(run.paths.record(PREPARE, None))) is not None:
            rows = pq.read_table(rec.parquet_files(run.paths.root)).to_pylist()
            tok_dir = run.paths.policy_dir(0)
    else:
        cfg = load_config(target)
    if rows is None:
        rows = load_problems(cfg.task, cfg.prompt)
        tok_dir = Path(cfg.model.path) if cfg.model.path else ensure_tiny_model(cfg)
    tok = AutoTokenizer.from_pretrained(tok_dir)
    chats = conversations(rows, cfg.prompt, split)
    of = {r["prompt_id"]: r for r in rows}
    out = []
    for pid in sorted(chats)[:n]:
        text = render_prompt_text(tok, chats[pid])
        out.append(
            {
                "prompt_id": pid,
                "dataset": of[pid].get("dataset"),
                "split": split,
                "text": text,
                "tokens": len(render_prompt_ids(tok, chats[pid])),
            }
        )
    return out
