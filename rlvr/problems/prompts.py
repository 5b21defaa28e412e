"""Prompts as chat turns: `[prompt]` system turn, few-shot examples, then the problem's user turn.

The user turn is the problems' `prompt` column (the dataset's template already applied by
rlvr.problems.datasets at prepare). Few-shot examples are inline turns (prompt.few_shot = [...]) or the
rows of the problem's own dataset whose split is 'few_shot' (prompt.few_shot = N), each a user
turn and an assistant turn (prompt.few_shot_response). The model's chat template then turns the
turns into text and token ids.

One path: `prompt_ids` (problem rows + `[prompt]` -> the exact token ids of each prompt) is what
rollout, evaluate, `rlvr import`, the tiny model's warm-up, `rlvr prompts` and the benchmarks call;
no other code applies a chat template (tests/integration/test_prompt_path.py checks both: every consumer gives
the same ids, and no other module renders).

Test: pytest tests/integration/test_prompt_path.py tests/unit/data/test_datasets.py -k prompt
"""

from __future__ import annotations

from collections import defaultdict

from rlvr.config import PromptSection
from rlvr.problems.datasets import FEW_SHOT, fill

Messages = list[dict[str, str]]  # chat turns: {"role": "system" | "user" | "assistant", "content": ...}


def chat_text(tok, chat: str | Messages) -> str:
    """The exact text chat turns become: the chat template over them plus the assistant header;
    without a chat template, the turns' contents joined by blank lines (a lone user turn as is).
    A plain string is one user turn. (The template step of `prompt_ids`: library code calls that.)"""
    turns = [{"role": "user", "content": chat}] if isinstance(chat, str) else chat
    if tok.chat_template:
        return tok.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
    return "\n\n".join(m["content"] for m in turns)


def chat_ids(tok, chat: str | Messages) -> list[int]:
    """Token ids of `chat_text`: the chat template already holds the special tokens, plain text gets
    the tokenizer's."""
    return tok(chat_text(tok, chat), add_special_tokens=not tok.chat_template)["input_ids"]


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


def prompt_ids(tok, rows: list[dict], prompt: PromptSection, split: str) -> dict[str, list[int]]:
    """prompt_id -> the exact token ids the model gets for each problem of one split ('train' |
    'test'): [prompt] system turn, few-shot turns, the problem's user turn, the chat template and the
    assistant header. `rows` are all of a run's problems (its few-shot rows among them). The one
    function that renders a prompt."""
    return {pid: chat_ids(tok, chat) for pid, chat in conversations(rows, prompt, split).items()}
