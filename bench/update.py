"""Benchmark: our GRPO update (rlvr.train.loop.grpo_steps) against TRL's GRPOTrainer loss + backward.

    python bench/update.py                                  # SmolLM2-135M-sized random Llama: ~10 min idle, ~25 loaded
    python bench/update.py --layers 2 --hidden 128 --repeats 1 --out /tmp/u.json   # seconds
    python bench/update.py --model PATH                     # an HF folder instead of random weights
    python bench/update.py --trl-no-gc                      # TRL without its default gradient checkpointing
    python bench/update.py --layouts packed                 # ours with packed micro-batches only (default: packed and padded)
    python bench/update.py --layouts packed,packed-bf16     # ours in fp32 and with bf16 autocast (update.bf16), side by side
    python bench/update.py --device cuda --layouts auto,auto-bf16 --trl-bf16   # on a GPU (bench/gpu.py runs this)
    python bench/update.py --no-trl ...                     # ours only, where trl is not installed

Needs the bench extra (`pip install -e ".[bench]"`, i.e. trl). No network: the model is a randomly
initialised Llama built here (default hidden 576 / 30 layers / vocab 49152, the shape of
SmolLM2-135M) with a small BPE tokenizer (rlvr.models.tiny.build_tokenizer), and the batch is synthetic: P
prompts x G completions of random token ids (lengths drawn between half and all of --prompt-len /
--completion-len), old logprobs = the model's own logprobs plus Gaussian noise (so the ratio clip
acts), group-normalised advantages of random 0/1 rewards.

Both sides get the same weights, batch, fp32, clip epsilons, token-mean loss, no KL, one AdamW
step (same lr, betas, weight decay, grad-norm clip):
  - ours: rlvr.train.loop.grpo_steps with one mini-batch (its token-budget micro-batches, length-sorted),
          once per --layouts entry: `packed` (padding-free rows, update.packing = true) and `padded`;
          a `-bf16` entry (`packed-bf16`) is the same with update.bf16 = true (bf16 autocast, fp32
          weights and AdamW state), and its fp32 twin's median over its own is `bf16_speedup_ours_*`.
  - trl:  GRPOTrainer.compute_loss + accelerator.backward on TRL's own input format (left-padded
          prompt_ids, right-padded completion_ids, masks, advantages, old_per_token_logps,
          num_items_in_batch), split into per_device_train_batch_size chunks with gradient
          accumulation as its training loop does, then grad-norm clip + its optimiser's step.
          TRL never generates here: only its loss path, backward and the optimiser step are timed.
`auto` layouts leave update.packing (and, by default, update.micro_batch_tokens) on "auto": what a run
gets on that device (rlvr.train.budget). Each side runs in its own worker process (so its peak memory is its own); the parent alternates
them (ours-packed, ours-padded, trl, ours-packed, ...) after one warm-up step each and reports medians. Peak memory of a
side is the high-water mark of its worker's resident set during its timed steps (VmHWM, reset through
/proc/self/clear_refs before each step) minus its resident set after loading, before any step:
imports are left out; optimiser state, gradients, activations, logits, what the allocator keeps,
and the weights (safetensors maps them lazily, so they page in during the first step) count. With
--device cuda it is GPU memory instead: torch.cuda.max_memory_allocated during the step, less what
was allocated once the side was built (`*_maxrss_mb` is then the step's whole peak).

Prints `key: value` lines and writes them with machine, versions and settings to
bench/results/update.json (the bench conventions are in bench/README.md). Tokens = completion tokens trained on.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch
from machine import machine_info, write_result  # bench/machine.py
from transformers.utils import logging as hf_logging

from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.train import grpo
from rlvr.train.batch import TrainRow, collate, micro_batches
from rlvr.train.budget import attention_for
from rlvr.train.logprobs import policy_token_logprobs
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import enable_gradient_checkpointing, make_optimizer

RESULTS = Path(__file__).parent / "results" / "update.json"
TAG = "@@bench "  # worker -> parent protocol lines; anything else a library prints is passed through


# ---- inputs -------------------------------------------------------------------------------


def build_model(args: argparse.Namespace, folder: Path) -> Path:
    """A random Llama + a small BPE tokenizer saved as an HF folder (or --model as given)."""
    if args.model:
        return Path(args.model)
    from transformers import LlamaConfig, LlamaForCausalLM

    from rlvr.models.tiny import build_tokenizer

    heads = args.heads or max(args.hidden // 64, 1)
    kv = args.kv_heads or (heads // 3 if heads % 3 == 0 else heads)
    cfg = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate or args.hidden * 8 // 3,
        num_hidden_layers=args.layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=args.hidden // heads,
        max_position_embeddings=2048,
        rope_theta=100000.0,
        tie_word_embeddings=True,
        use_cache=False,
    )
    torch.manual_seed(args.seed)
    model = LlamaForCausalLM(cfg)
    path = folder / "model"
    model.save_pretrained(path)
    tok = build_tokenizer(["def f(x): return x + 1", "The answer is <answer>42</answer>.", "1 + 2 = 3"])
    tok.save_pretrained(path)
    return path


def build_batch(args: argparse.Namespace, model_path: Path) -> dict:
    """P x G synthetic rows: token ids, old logprobs (model's own + noise), advantages."""
    g = torch.Generator().manual_seed(args.seed)
    device = torch.device(args.device)
    model, tok = load_policy(model_path, device)
    vocab = model.config.vocab_size
    lo = 8  # keep clear of special tokens
    rewards = torch.randint(0, 2, (args.prompts * args.group,), generator=g).float()  # (N,)
    for p in range(args.prompts):  # every group must carry signal, as the update's SQL keeps only those
        if rewards[p * args.group : (p + 1) * args.group].std() == 0:
            rewards[p * args.group] = 1 - rewards[p * args.group]
    group = torch.arange(args.prompts).repeat_interleave(args.group)  # (N,)
    adv, _ = grpo.group_advantages(rewards, group)  # (N,)
    rows: list[TrainRow] = []
    for p in range(args.prompts):
        plen = int(torch.randint(args.prompt_len // 2, args.prompt_len + 1, (1,), generator=g))
        prompt = torch.randint(lo, vocab, (plen,), generator=g).tolist()
        for k in range(args.group):
            clen = int(torch.randint(args.completion_len // 2, args.completion_len + 1, (1,), generator=g))
            resp = torch.randint(lo, vocab, (clen,), generator=g).tolist()
            rows.append(TrainRow(prompt, resp, [0.0] * clen, float(adv[p * args.group + k])))
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    with torch.no_grad():
        out: dict[int, list[float]] = {}
        for mb in micro_batches(rows, 4096):
            lp = policy_token_logprobs(model, collate(mb, pad, device)).cpu()  # (b, T-1)
            for b, r in enumerate(mb):
                P, R = len(r.prompt_ids), len(r.response_ids)
                noisy = lp[b, P - 1 : P + R - 1] + args.logprob_noise * torch.randn(R, generator=g)  # (R,)
                out[id(r)] = noisy.tolist()
    rows = [TrainRow(r.prompt_ids, r.response_ids, out[id(r)], r.advantage) for r in rows]
    return {"rows": [r.__dict__ for r in rows], "pad_id": pad}


# ---- workers (one process per side) -------------------------------------------------------


def _rss_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cuda_mb() -> float:
    return torch.cuda.memory_allocated() / 2**20


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def _describe(model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict:
    """What a worker actually runs with, read back from the objects (not from our settings)."""
    checkpointing = getattr(model, "is_activation_checkpointing", None)  # transformers >= 5; older: is_gradient_...
    return {
        "gradient_checkpointing": bool(model.is_gradient_checkpointing if checkpointing is None else checkpointing),
        "optimizer": type(opt).__name__,
        "fused": opt.defaults.get("fused"),
        "foreach": opt.defaults.get("foreach"),
        "lr": opt.param_groups[0]["lr"],
        "betas": list(opt.param_groups[0]["betas"]),
        "weight_decay": sorted({g["weight_decay"] for g in opt.param_groups}),
        "param_dtype": str(next(model.parameters()).dtype),
    }


# ours: micro-batch layout (auto: update.packing = "auto", rlvr.train.budget), and bf16 autocast or not
LAYOUTS = ("packed", "padded", "auto", "packed-bf16", "padded-bf16", "auto-bf16")


def update_section(args: argparse.Namespace, layout: str) -> UpdateSection:
    return UpdateSection(
        lr=args.lr,
        eps_low=args.eps_low,
        eps_high=args.eps_high,
        aggregation="token_mean",
        kl_beta=0.0,
        epochs=1,
        minibatches=1,
        micro_batch_tokens=args.micro_batch_tokens,
        packing="auto" if layout.startswith("auto") else layout.removesuffix("-bf16") == "packed",
        bf16=layout.endswith("-bf16"),
        max_grad_norm=1.0,
        gradient_checkpointing=args.ours_gc,
        device=args.device,
    )


def _ours(args: argparse.Namespace, model_path: Path, batch: dict, layout: str):
    cfg = update_section(args, layout)
    device = torch.device(args.device)
    model, _ = load_policy(model_path, device, attention=attention_for(cfg, device))
    if cfg.gradient_checkpointing:  # as rlvr.train.update.run_update does
        enable_gradient_checkpointing(model)
    opt, sched, _ = make_optimizer(model, cfg, None)
    rows = [TrainRow(**r) for r in batch["rows"]]

    def step() -> dict:
        (m,) = grpo_steps(
            model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=batch["pad_id"], norm_constant=float(args.completion_len)
        )
        return {k: m[k] for k in ("loss", "grad_norm", "micro_batches", "micro_batch_tokens")}

    return step, _describe(model, opt)


def trl_inputs(rows: list[TrainRow], pad_id: int) -> dict[str, torch.Tensor]:
    """The generation batch as GRPOTrainer._generate_and_score_completions returns it."""
    from trl.trainer.utils import pad

    prompt_ids = pad([torch.tensor(r.prompt_ids) for r in rows], padding_value=pad_id, padding_side="left")  # (N, P)
    prompt_mask = pad([torch.ones(len(r.prompt_ids), dtype=torch.long) for r in rows], padding_side="left")  # (N, P)
    completion_ids = pad([torch.tensor(r.response_ids) for r in rows], padding_value=pad_id)  # (N, C)
    completion_mask = pad([torch.ones(len(r.response_ids), dtype=torch.long) for r in rows])  # (N, C)
    old = pad([torch.tensor(r.old_logprobs) for r in rows])  # (N, C)
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": prompt_mask,
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "advantages": torch.tensor([r.advantage for r in rows]),
        "num_items_in_batch": completion_mask.sum(),
        "old_per_token_logps": old,
    }


def trl_config(args: argparse.Namespace, out_dir: str, n_rows: int):
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=out_dir,
        use_cpu=args.device == "cpu",
        use_vllm=False,
        bf16=args.trl_bf16,
        report_to=[],
        per_device_train_batch_size=args.trl_batch,
        gradient_accumulation_steps=n_rows // args.trl_batch,
        num_generations=args.group,
        max_completion_length=args.completion_len,
        temperature=1.0,
        beta=0.0,
        loss_type="dapo",
        epsilon=args.eps_low,
        epsilon_high=args.eps_high,
        learning_rate=args.lr,
        adam_beta1=0.9,
        adam_beta2=0.99,
        weight_decay=0.0,
        max_grad_norm=1.0,
        gradient_checkpointing=not args.trl_no_gc,
        logging_steps=1,
        save_strategy="no",
        seed=args.seed,
    )


def _trl(args: argparse.Namespace, model_path: Path, batch: dict):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer
    from trl.trainer.utils import split_tensor_dict

    rows = [TrainRow(**r) for r in batch["rows"]]
    if len(rows) % args.trl_batch:
        raise SystemExit(f"--trl-batch {args.trl_batch} must divide the {len(rows)} rows (prompts x group)")
    targs = trl_config(args, tempfile.mkdtemp(prefix="rlvr-bench-trl-"), len(rows))
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(model_path)
    data = Dataset.from_dict({"prompt": ["unused: TRL never generates in this benchmark"] * args.prompts})
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=lambda completions, **kw: [0.0] * len(completions),
        args=targs,
        train_dataset=data,
        processing_class=tok,
    )
    model = trainer.model
    if targs.activation_checkpointing:  # what Trainer.train() does before its loop
        kw = dict(targs.activation_checkpointing_kwargs or {})
        model.activation_checkpointing_enable(
            activation_checkpointing_kwargs={k: v for k, v in kw.items() if k not in ("every_n_layers", "offload")} or None
        )
    trainer.create_optimizer()
    ga = targs.gradient_accumulation_steps
    trainer.current_gradient_accumulation_steps = ga  # set by Trainer's loop; read by the loss normaliser
    chunks = split_tensor_dict(trl_inputs(rows, batch["pad_id"]), targs.steps_per_generation)

    def step() -> dict:
        model.train()
        t0 = time.perf_counter()
        loss_sum = 0.0
        for inputs in chunks:
            with trainer.compute_loss_context_manager():
                loss = trainer.compute_loss(model, inputs)
            trainer.accelerator.backward(loss)
            loss_sum += float(loss.detach())
        t_lb = time.perf_counter() - t0
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), targs.max_grad_norm)
        trainer.optimizer.step()
        model.zero_grad(set_to_none=True)
        return {"loss": loss_sum, "grad_norm": float(grad_norm), "micro_batches": len(chunks), "loss_backward_s": t_lb}

    return step, _describe(model, trainer.optimizer)


def worker(args: argparse.Namespace) -> None:
    """Build one side, then answer one 'step' line from the parent at a time."""
    if sys.platform == "linux":  # die with the parent (prctl PR_SET_PDEATHSIG = 1), e.g. on Ctrl-C or kill
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)
    batch = torch.load(Path(args.worker_dir) / "batch.pt", weights_only=False)
    model_path = Path(Path(args.worker_dir) / "model_path.txt").read_text()
    if args.worker == "trl":
        step, info = _trl(args, Path(model_path), batch)
    else:
        step, info = _ours(args, Path(model_path), batch, layout=args.worker.removeprefix("ours-"))
    cuda = args.device == "cuda"
    print(TAG + json.dumps(info | {"rss_mb": _cuda_mb() if cuda else _rss_mb("VmRSS")}), flush=True)
    for line in sys.stdin:
        if line.strip() != "step":
            break
        if cuda:  # GPU memory: allocated by tensors, as torch.cuda.max_memory_allocated counts it
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        base = _cuda_mb() if cuda else _rss_mb("VmRSS")
        exact = cuda or _reset_peak()
        t0 = time.perf_counter()
        out = step()
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        if cuda:
            peak = torch.cuda.max_memory_allocated() / 2**20
        else:
            peak = _rss_mb("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            TAG
            + json.dumps(
                out | {"seconds": seconds, "base_mb": base, "peak_mb": peak - base, "maxrss_mb": peak, "peak_exact": exact}
            ),
            flush=True,
        )


class Side:
    """A worker process for one side, driven line by line."""

    def __init__(self, name: str, argv: list[str]):
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *argv, "--worker", name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.ready = self._read()

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(TAG):
                return json.loads(line[len(TAG) :])
            sys.stderr.write(f"[{self.name}] {line}")
        raise RuntimeError(f"the {self.name} worker exited with code {self.proc.wait()} (its stderr is above)")

    def step(self) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write("step\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# ---- parent -------------------------------------------------------------------------------


def tokens_arg(s: str) -> int | str:
    """update.micro_batch_tokens from the command line: a number, or auto."""
    return s if s == "auto" else int(s)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="an HF folder to use instead of a random Llama")
    ap.add_argument("--hidden", type=int, default=576)
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--intermediate", type=int, default=0, help="0 = hidden * 8 / 3 (1536 for 576)")
    ap.add_argument("--heads", type=int, default=0, help="0 = hidden / 64")
    ap.add_argument("--kv-heads", type=int, default=0, help="0 = heads / 3 when divisible, else heads")
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--group", type=int, default=8, help="completions per prompt (G)")
    ap.add_argument("--prompt-len", type=int, default=64, help="longest prompt; lengths drawn from [len/2, len]")
    ap.add_argument("--completion-len", type=int, default=96, help="longest completion; drawn from [len/2, len]")
    ap.add_argument("--logprob-noise", type=float, default=0.1, help="std of the noise on old logprobs")
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument("--eps-low", type=float, default=0.2)
    ap.add_argument("--eps-high", type=float, default=0.28, help="DAPO clip-higher")
    ap.add_argument(
        "--micro-batch-tokens",
        type=tokens_arg,
        default=UpdateSection().micro_batch_tokens,
        help='ours: update.micro_batch_tokens, a number or "auto" (512 on the CPU; on CUDA by the free memory)',
    )
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where every side runs")
    ap.add_argument("--no-trl", action="store_true", help="ours only: no TRL side (where trl is not installed)")
    ap.add_argument("--layouts", default="packed,padded", help="ours: micro-batch layouts to run, each its own side")
    ap.add_argument("--ours-gc", action="store_true", help="ours: gradient checkpointing (off by default)")
    ap.add_argument("--trl-batch", type=int, default=8, help="TRL per_device_train_batch_size (its default 8)")
    ap.add_argument("--trl-no-gc", action="store_true", help="TRL: turn off its default gradient checkpointing")
    ap.add_argument("--trl-bf16", action="store_true", help="TRL: bf16 (its default on a GPU; off here, as ours is fp32 on CPU)")
    ap.add_argument("--repeats", type=int, default=3, help="timed steps per side, after one warm-up step each")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--resummarise", type=Path, help="recompute the figures of an existing results file and exit")
    ap.add_argument("--worker", choices=[f"ours-{x}" for x in LAYOUTS] + ["trl"], help=argparse.SUPPRESS)
    ap.add_argument("--worker-dir", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def package_version(pkg: str) -> str | None:
    """The installed version of a package, or None when it is not installed."""
    try:
        return version(pkg)
    except PackageNotFoundError:
        return None


def summarise(runs: dict[str, list[dict]], workers: dict[str, dict], *, tokens: int) -> dict:
    """The figures from the raw per-step records: run 0 of each side is the warm-up and is left out.

    Sides are `trl` and one or more of ours (`ours-packed`, `ours-padded`; `ours` in results
    files written before packing). Per side: tokens/s, median seconds, peak memory; per side of
    ours: TRL's median time over its median time (`ratio_*`) and the same ratio per repeat, as
    each repeat's sides ran back to back (robust to load that changes between repeats).
    Peak memory of a side = the highest resident set during its timed steps minus its resident set
    once the model was loaded and before any step: optimiser state, gradients, activations, logits,
    what the allocator keeps after the warm-up, and lazily mapped weights count; imports do not."""
    timed = {n: v[1:] for n, v in runs.items()}
    med = {n: statistics.median(x["seconds"] for x in v) for n, v in timed.items()}
    peak = {n: max(x["maxrss_mb"] for x in v) for n, v in timed.items()}
    out: dict = {"tokens": tokens}
    for n in runs:
        key = n.replace("-", "_")
        out |= {
            f"{key}_tokens_per_s": round(tokens / med[n], 1),
            f"{key}_s": round(med[n], 3),
            f"{key}_peak_mb": round(peak[n] - workers[n]["rss_mb"]),
            f"{key}_maxrss_mb": round(peak[n]),
        }
    for n in (n for n in runs if n != "trl" and "trl" in runs):
        key = n.replace("-", "_")
        pairs = [t["seconds"] / o["seconds"] for o, t in zip(timed[n], timed["trl"], strict=True)]
        warm = runs[n][0], runs["trl"][0]  # the same weights on all sides only before the first step
        out |= {
            f"ratio_{key}": round(med["trl"] / med[n], 3),
            f"paired_median_ratio_{key}": round(statistics.median(pairs), 3),
            f"paired_min_ratio_{key}": round(min(pairs), 3),
            f"paired_max_ratio_{key}": round(max(pairs), 3),
            f"loss_abs_diff_{key}": abs(warm[0]["loss"] - warm[1]["loss"]),
            f"grad_norm_rel_diff_{key}": abs(warm[0]["grad_norm"] - warm[1]["grad_norm"]) / max(warm[1]["grad_norm"], 1e-12),
        }
    for n in (n for n in runs if n.endswith("-bf16") and n.removesuffix("-bf16") in runs):
        twin, key = n.removesuffix("-bf16"), n.removesuffix("-bf16").replace("-", "_")
        pairs = [a["seconds"] / b["seconds"] for a, b in zip(timed[twin], timed[n], strict=True)]
        out |= {
            f"bf16_speedup_{key}": round(med[twin] / med[n], 3),
            f"bf16_paired_median_speedup_{key}": round(statistics.median(pairs), 3),
            # the warm-up step: both start from the same weights and batch
            f"bf16_loss_abs_diff_{key}": abs(runs[n][0]["loss"] - runs[twin][0]["loss"]),
            f"bf16_grad_norm_rel_diff_{key}": abs(runs[n][0]["grad_norm"] - runs[twin][0]["grad_norm"])
            / max(runs[twin][0]["grad_norm"], 1e-12),
        }
    if "trl" in runs:
        out["trl_loss_backward_s"] = round(statistics.median(x["loss_backward_s"] for x in timed["trl"]), 3)
    return out


def resummarise(path: Path) -> None:
    """Recompute a results file's figures from its raw runs (after a change to `summarise`)."""
    result = json.loads(path.read_text())
    figures = summarise(result["runs"], result["workers"], tokens=result["figures"]["tokens"]) | {
        k: v for k, v in result["figures"].items() if k == "build_s"
    }
    write_result(path, figures, **{k: v for k, v in result.items() if k != "figures"})


def main() -> None:
    args = parse_args()
    hf_logging.disable_progress_bar()  # per-file "Loading weights" bars
    if args.worker:
        return worker(args)
    if args.resummarise:
        return resummarise(args.resummarise)
    argv = sys.argv[1:]
    layouts = [x for x in args.layouts.split(",") if x]
    if not layouts or set(layouts) - set(LAYOUTS):
        raise SystemExit(f"--layouts {args.layouts!r}: a comma-separated list of {', '.join(LAYOUTS)}")
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-update-") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        model_path = build_model(args, folder)
        model_cfg = json.loads((model_path / "config.json").read_text())
        batch = build_batch(args, model_path)
        torch.save(batch, folder / "batch.pt")
        (folder / "model_path.txt").write_text(str(model_path))
        build_s = time.perf_counter() - t
        names = [f"ours-{layout}" for layout in layouts] + ([] if args.no_trl else ["trl"])
        sides = {n: Side(n, [*argv, "--worker-dir", tmp]) for n in names}
        runs: dict[str, list[dict]] = {n: [] for n in names}
        try:
            for r in range(1 + args.repeats):  # ours-packed, ours-padded, trl, ours-packed, ...: these machines drift
                for name, side in sides.items():
                    res = side.step()
                    print(
                        f"# repeat {r}{' (warm-up)' if r == 0 else ''} {name}: {res['seconds']:.2f} s, "
                        f"loss {res['loss']:.6f}, grad_norm {res['grad_norm']:.4f}, peak +{res['peak_mb']:.0f} MB",
                        file=sys.stderr,
                        flush=True,
                    )
                    runs[name].append(res)
        finally:
            for side in sides.values():
                side.close()
    rows = [TrainRow(**r) for r in batch["rows"]]
    workers = {n: side.ready for n, side in sides.items()}
    figures = summarise(runs, workers, tokens=sum(len(r.response_ids) for r in rows)) | {"build_s": round(build_s, 1)}
    write_result(
        args.out,
        figures,
        workers=workers,
        runs=runs,
        lengths=[[len(r.prompt_ids), len(r.response_ids)] for r in rows],  # prompt, completion: the model FLOPs
        model_config=model_cfg,
        machine=machine_info(torch_threads=torch.get_num_threads()),
        versions={p: package_version(p) for p in ("torch", "transformers", "trl", "accelerate", "rlvr")},
        settings={k: v for k, v in vars(args).items() if not k.startswith("worker")}
        | {
            **{
                f"ours-{layout}": update_section(args, layout).model_dump()
                | {"temperature": 1.0, "dtype": "float32 weights" + (", bf16 autocast" if layout.endswith("-bf16") else "")}
                for layout in layouts
            },
            "trl": {
                "per_device_train_batch_size": args.trl_batch,
                "gradient_accumulation_steps": len(rows) // args.trl_batch,
                "loss_type": "dapo",
                "beta": 0.0,
                "epsilon": args.eps_low,
                "epsilon_high": args.eps_high,
                "gradient_checkpointing": not args.trl_no_gc,
                "bf16": args.trl_bf16,
                "use_cpu": args.device == "cpu",
                "use_vllm": False,
                "optim": "transformers default",
                "log-prob path": "TRL's fused/chunked LM head (always on in this TRL)",
                "old_per_token_logps": "given (as ours: the rollout's logprobs)",
            },
            "tokens": "completion tokens trained on (the same on both sides)",
            "timed": "ours: grpo_steps (forward, loss, backward, clip, AdamW step); trl: compute_loss + backward per "
            "chunk, clip, optimizer.step; no generation on either side",
        },
    )


if __name__ == "__main__":
    main()
