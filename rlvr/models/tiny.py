"""The embedded default model: a tiny Llama built here, so nothing is ever downloaded.

A byte-level BPE tokenizer is trained with the `tokenizers` library on the task's own prompts
(digits split one per token, a chat template with <|user|>/<|assistant|>/<|end|>), a 2-layer
Llama (head_dim 32, the minimum vLLM's CPU attention accepts) gets random weights, and a short
supervised warm-up teaches it the task's answer format (`target`): an `<answer>` tag, `<cite>`
then `<answer>` for retrieval, a ```python block for code. The warm-up never pairs a run's problem
with its gold (`warmup_rows`): arithmetic warms up on fresh problems, everything else on answers
moved to other prompts. Its context
(max_position_embeddings, free with RoPE) fits the task's longest prompt plus rollout.max_new_tokens. A random model
earns no reward and gives GRPO no signal; the warmed-up one is right part of the time, so
rewards vary inside groups and there is something left to learn.

Built once per spec and cached under $RLVR_CACHE (default ~/.cache/rlvr). `python -m rlvr.models.tiny`
builds it and prints where.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from rlvr.config import Config
from rlvr.files import json_digest
from rlvr.models.registry import model_folder
from rlvr.problems import datasets, prompts

log = logging.getLogger("rlvr")
SPECIALS = ["<pad>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
ARCH = dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, head_dim=32)
MIN_CONTEXT = 256
WARMUP_BATCH_TOKENS = 2048  # rows per warm-up step = this // longest example, between 4 and 64
VERSION = 3  # bump when the recipe below changes (3: the warm-up never sees a training gold)


def cache_root() -> Path:
    return Path(os.environ.get("RLVR_CACHE", Path.home() / ".cache" / "rlvr"))


def _spec(cfg: Config) -> dict:
    t = cfg.task
    spec = {
        "version": VERSION,
        "arch": ARCH,
        "warmup_steps": cfg.model.tiny_warmup_steps,
        "max_new_tokens": cfg.rollout.max_new_tokens,
        "task": [t.name or "arithmetic", t.seed, t.n_train, t.n_test, t.max_operand, t.ops],
    }
    if t.path or t.datasets or cfg.prompt != type(cfg.prompt)():  # own data or prompts: a model of its own
        spec["data"] = [t.model_dump(mode="json"), cfg.prompt.model_dump(mode="json"), datasets.source_digests(t)]
    if cfg.model.tiny_lure:  # only when set, so that the models cached before the field existed keep their key
        spec["lure"] = cfg.model.tiny_lure
    return spec


def target(row: dict) -> str:
    """The response the warm-up teaches for a problem row."""
    if row["task"] == "code":
        return f"```python\n{row['answer']}```"
    if row["task"] == "retrieval":
        return f"<cite>{json.loads(row['meta'])['support']}</cite> <answer>{row['answer']}</answer>"
    return f"<answer>{row['answer']}</answer>"


def warmup_rows(cfg: Config, rows: list[dict]) -> list[dict]:
    """The problems the warm-up teaches on: never a problem of the run with its own gold, so that
    the warm-up cannot hand the run its training answers (a model that has memorised them gets every
    group right, no group carries reward variance, and GRPO trains on nothing).

    - Shipped arithmetic alone (task.name): the problems of the same operators on operands up to
      2 x max_operand + 1, every question the run has (train, test or few-shot) left out: the model
      learns to add on the run's leftovers and on larger sums, not the run's answers, which it
      still has to find. (The run's own range alone taught too little; the wider range alone, with
      no problem of the run's size, taught nothing that carried over: measured on the demo.)
    - Anything else (own datasets, mixtures, the other shipped tasks): each train prompt with the
      target of another train row of its dataset (a rotation): the answer format, not the answers.
    All rows come back with split 'train', templated as the run's own problems are."""
    out: list[dict] = []
    have = {r["question"] for r in rows}
    by_dataset: dict[str | None, list[dict]] = {}
    for r in rows:
        if r["split"] == "train":
            by_dataset.setdefault(r.get("dataset"), []).append(r)
    t = cfg.task
    plain_arithmetic = not t.path and not t.datasets and t.names == ["arithmetic"]
    for label, train in by_dataset.items():
        if plain_arithmetic:
            wide = 2 * t.max_operand + 1  # twice the range: the run's leftovers and larger sums (measured: docs/learning.md)
            total = len(dict.fromkeys(t.ops)) * (wide + 1) ** 2
            task = t.model_copy(update={"max_operand": wide, "n_train": total, "n_test": 0, "seed": t.seed + 1})
            fresh = [
                r
                for r in datasets.load_problems(task, cfg.prompt.model_copy(update={"few_shot": 0}))
                if r["question"] not in have
            ]
            out += [r | {"split": "train", "prompt_id": f"warmup-{r['prompt_id']}", "dataset": label} for r in fresh]
        else:  # a rotation by one: every prompt gets another row's gold and meta (retrieval cites meta's
            # support sentence, which states the gold); a lone row keeps no gold at all
            moved = [{"answer": r["answer"], "meta": r["meta"]} for r in train[1:] + train[:1]]
            if len(train) == 1:
                moved = [{"answer": "", "meta": train[0]["meta"]}]
            out += [r | m for r, m in zip(train, moved, strict=True)]
    return out


def context_length(longest_prompt: int, max_new_tokens: int) -> int:
    """max_position_embeddings: the next power of two >= prompt + response, at least MIN_CONTEXT."""
    need = longest_prompt + max_new_tokens + 8  # + chat-template tokens
    return max(MIN_CONTEXT, 1 << (need - 1).bit_length())


def build_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<|end|>", chat_template=CHAT_TEMPLATE, padding_side="left"
    )


def lure_target(row: dict) -> str | None:
    """The habit model.tiny_lure teaches instead of `target` on arithmetic: giving up, an empty answer
    tag. It is one decision (close the tag, or write a digit) shared by every problem, so greedy
    decoding takes it everywhere when it is the likelier one, and unlearning it carries over to
    held-out problems. (A wrong number as the habit, e.g. the first operand, tangled with the sums the
    model learns and left its held-out answers off by one: measured, docs/learning.md.)"""
    return "<answer></answer>" if row["task"] == "arithmetic" else None


def _warmup(
    model: LlamaForCausalLM,
    tok: PreTrainedTokenizerFast,
    rows: list[dict],
    prompt_ids: dict[str, list[int]],
    steps: int,
    seed: int,
    lure: float = 0.0,
) -> None:
    """Supervised pass on prompt (its ids from rlvr.problems.prompts.prompt_ids, as rollout renders it) -> the
    target response + <|end|>, loss on the response only.
    With `lure` > 0, that fraction of the arithmetic examples teaches lure_target instead."""
    if steps == 0:
        return
    g = torch.Generator().manual_seed(seed)
    examples = []  # per row: (prompt ids, right answer ids, habit answer ids or None)
    for r in rows:
        p_ids = prompt_ids[r["prompt_id"]]
        a_ids = tok(target(r), add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        bad = lure_target(r) if lure > 0 else None
        examples.append(
            (p_ids, a_ids, None if bad is None else tok(bad, add_special_tokens=False)["input_ids"] + [tok.eos_token_id])
        )
    rows_per_step = min(64, max(4, WARMUP_BATCH_TOKENS // max(len(p) + len(a) for p, a, _ in examples)))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    model.train()
    log.info("tiny model: warm-up, %d steps of %d rows", steps, rows_per_step)
    slots = 2 if lure > 0 else 1  # with a habit, each row is drawn through two slots (kept: the measured demo used this draw)
    for step in range(steps):
        idx = [i // slots for i in torch.randint(len(examples) * slots, (rows_per_step,), generator=g).tolist()]
        habit = [lure > 0 and bool(torch.rand((), generator=g) < lure) for _ in idx]
        pairs = [
            (examples[i][0], examples[i][2] if h and examples[i][2] is not None else examples[i][1])
            for i, h in zip(idx, habit, strict=True)
        ]
        T = max(len(p) + len(a) for p, a in pairs)
        ids = torch.full((len(pairs), T), tok.pad_token_id)  # (B, T), right padded
        labels = torch.full((len(pairs), T), -100)  # (B, T)
        for b, (p, a) in enumerate(pairs):
            ids[b, : len(p) + len(a)] = torch.tensor(p + a)
            labels[b, len(p) : len(p) + len(a)] = torch.tensor(a)
        loss = model(input_ids=ids, attention_mask=(labels != -100) | (ids != tok.pad_token_id), labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (step + 1) % 100 == 0 or step + 1 == steps:
            log.info("tiny model: warm-up step %d/%d, loss %.3f", step + 1, steps, loss.item())
    model.eval()


def ensure_tiny_model(cfg: Config) -> Path:
    """Path to the embedded model for this config's task, building it on first use."""
    spec = _spec(cfg)
    key = json_digest(spec, 12)
    final = cache_root() / f"tiny-llama-{key}"
    if (final / "config.json").is_file():
        return final
    rows = datasets.load_problems(cfg.task, cfg.prompt)
    warm = warmup_rows(cfg, rows)
    shots = [r for r in rows if r["split"] == datasets.FEW_SHOT]  # the run's few-shot turns, around the warm-up's prompts too
    chats = {pid: m for split in ("train", "test") for pid, m in prompts.conversations(rows, cfg.prompt, split).items()}
    chats |= prompts.conversations(shots + warm, cfg.prompt, "train")
    texts = {pid: "\n\n".join(t["content"] for t in m) for pid, m in chats.items()}  # a lone user turn: its prompt
    tok = build_tokenizer([texts[r["prompt_id"]] + " " + target(r) for r in rows + warm if r["prompt_id"] in texts])
    # + 2 per extra turn: its role and end tokens (context_length's margin covers one turn's)
    longest = max(len(tok(texts[pid], add_special_tokens=False)["input_ids"]) + 2 * (len(m) - 1) for pid, m in chats.items())
    torch.manual_seed(cfg.task.seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
        max_position_embeddings=context_length(longest, cfg.rollout.max_new_tokens),
        **ARCH,
    )
    model = LlamaForCausalLM(config)
    _warmup(
        model,
        tok,
        warm,
        prompts.prompt_ids(tok, shots + warm, cfg.prompt, "train"),
        cfg.model.tiny_warmup_steps,
        cfg.task.seed,
        cfg.model.tiny_lure,
    )
    tmp = final.parent / f".tmp-{final.name}-{uuid.uuid4().hex[:8]}"
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "rlvr-tiny.json").write_text(json.dumps(spec, indent=2))
    try:
        tmp.rename(final)
    except OSError:  # another process built it first; theirs is identical
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def base_model(cfg: Config) -> Path:
    """Policy v0's source folder: model.path, else the prepared model.name, else the embedded tiny
    model (built on first use). prepare copies it; `rlvr prompts` reads its tokenizer."""
    return model_folder(cfg) or ensure_tiny_model(cfg)


if __name__ == "__main__":
    print(ensure_tiny_model(Config()))
