"""GPU check: the GRPO update in bf16 on CUDA against fp32 on the CPU, for the tiny model and SmolLM2.

    bash scripts/gpu-check.sh bf16                     # one NVIDIA GPU, no network, a few minutes
    python bench/gpu_check.py --device cpu --models tiny --steps 1 --out /tmp/g.json   # the CPU dry run (tests)

For each model (tiny: a 2-layer Llama of width 128; smollm2: the prepared SmolLM2-135M-Instruct folder
when `rlvr models prepare smollm2-135m-instruct` has run, else a random Llama of its shape), on the
same synthetic batch (bench/update.py's build_batch: P x G rows, old logprobs the model's own plus
noise, group advantages of random rewards):
  - reference: one update step (rlvr.train.loop.grpo_steps) in fp32 on the CPU, from the initial weights;
  - check:     the same step from the same weights on --device with update.bf16 (autocast; fp32
               master weights and AdamW state), compared with the reference on three figures, each
               within TOLERANCE (bf16 keeps 8 bits of mantissa: per-token logprob errors of ~1e-2
               average out in the token mean):
                 the loss, |a - b| <= TOLERANCE * max(1, |b|) (near 0 on the first step: the ratio
                   is ~1 and the group advantages sum to 0, so it alone would say little);
                 the mean response-token logprob before the step (what the ratio is made of),
                   |a - b| <= TOLERANCE * max(1, |b|), with the largest per-token gap reported;
                 the gradient norm before clipping, |a - b| <= 5 * TOLERANCE * b (a sum over every
                   parameter: bf16's errors add up there more than in the token mean);
  - speed:     --steps timed steps on --device in bf16, then as many in fp32: completion tokens/s
               of each, their ratio (bf16_speedup), and the peak memory of each
               (torch.cuda.max_memory_allocated on CUDA; the process's high-water RSS on the CPU,
               which never goes down, so there the fp32 figure is the run's peak so far). Each
               step loads the weights again (one_step): the timing starts after the load.
Prints `key: value` lines and writes bench/results/gpu-check.json with the machine and versions;
exits 1 when a loss is outside the tolerance. No network: models come from this machine.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from importlib.metadata import version
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import update as bench_update
from machine import machine_info, write_result  # bench/machine.py

from rlvr.config import UpdateSection
from rlvr.models.load import load_policy
from rlvr.models.registry import is_prepared, model_dir
from rlvr.train.batch import TrainRow
from rlvr.train.logprobs import rows_logprobs
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import make_optimizer

RESULTS = Path(__file__).parent / "results" / "gpu-check.json"
TOLERANCE = 2e-2
SHAPES = {"tiny": {"hidden": 128, "layers": 2, "vocab": 2048}, "smollm2": {"hidden": 576, "layers": 30, "vocab": 49152}}


def model_args(name: str, args: argparse.Namespace) -> argparse.Namespace:
    """bench/update.py's arguments for one model: its shape, and the batch of this check."""
    base = bench_update.parse_args([])
    for k, v in SHAPES[name].items():
        setattr(base, k, v)
    base.prompts, base.group, base.completion_len, base.prompt_len = args.prompts, args.group, args.completion_len, 64
    base.model = None
    if name == "smollm2" and is_prepared("smollm2-135m-instruct"):
        base.model = str(model_dir("smollm2-135m-instruct"))
    return base


def one_step(
    model_path: Path,
    rows: list[TrainRow],
    pad_id: int,
    device: torch.device,
    bf16: bool,
    *,
    lr: float,
    micro_batch_tokens: int | str,
    logprobs: bool = False,
) -> dict:
    """One update step from the folder's weights: its loss, grad norm, seconds and completion tokens;
    with `logprobs`, also the response-token logprobs before the step (one no-grad pass, untimed)."""
    cfg = bench_update.update_section(bench_update.parse_args([]), "packed").model_copy(
        update={"bf16": bf16, "device": device.type, "lr": lr, "micro_batch_tokens": micro_batch_tokens}
    )
    model, _ = load_policy(model_path, device)
    opt, sched, _ = make_optimizer(model, cfg, None)
    out = {}
    if logprobs:
        lps = rows_logprobs(model, [rows], temperature=1.0, pad_id=pad_id, device=device, bf16=bf16)
        out["logprobs"] = [x for row in lps for x in row]
        out["mean_logprob"] = sum(out["logprobs"]) / len(out["logprobs"])
    t0 = time.perf_counter()
    (m,) = grpo_steps(model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=pad_id, norm_constant=96.0)
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    return out | {
        "loss": m["loss"],
        "grad_norm": m["grad_norm"],
        "seconds": seconds,
        "tokens": sum(len(r.response_ids) for r in rows),
    }


def peak_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_steps(step: Callable[..., dict], device: torch.device, bf16: bool, n: int) -> tuple[float, float, float]:
    """`n` steps on `device`: completion tokens/s, seconds in all, and the peak memory they reached."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    timed = [step(device, bf16) for _ in range(n)]
    secs = sum(t["seconds"] for t in timed)
    return sum(t["tokens"] for t in timed) / secs, secs, peak_mb(device)


def check_model(name: str, args: argparse.Namespace, device: torch.device, work: Path) -> dict:
    margs = model_args(name, args)
    path = bench_update.build_model(margs, work / name)
    batch = bench_update.build_batch(margs, path)
    rows = [TrainRow(**r) for r in batch["rows"]]
    step = partial(one_step, path, rows, batch["pad_id"], lr=args.lr, micro_batch_tokens=args.micro_batch_tokens)
    ref = step(torch.device("cpu"), False, logprobs=True)
    got = step(device, True, logprobs=True)
    tps16, secs16, peak16 = timed_steps(step, device, True, args.steps)
    # the same steps in fp32 on --device, alternating nothing else: bf16's speed-up where it runs
    tps32, secs32, peak32 = timed_steps(step, device, False, args.steps)
    gap = abs(got["loss"] - ref["loss"])
    lp_gap = abs(got["mean_logprob"] - ref["mean_logprob"])
    gn_gap = abs(got["grad_norm"] - ref["grad_norm"])
    return {
        "model": margs.model or f"random Llama {SHAPES[name]}",
        "loss_fp32_cpu": ref["loss"],
        "loss_bf16": got["loss"],
        "loss_gap": gap,
        "mean_logprob_fp32_cpu": ref["mean_logprob"],
        "mean_logprob_bf16": got["mean_logprob"],
        "mean_logprob_gap": lp_gap,
        "max_token_logprob_gap": max(abs(a - b) for a, b in zip(got["logprobs"], ref["logprobs"], strict=True)),
        "grad_norm_fp32_cpu": ref["grad_norm"],
        "grad_norm_bf16": got["grad_norm"],
        "grad_norm_rel_gap": gn_gap / ref["grad_norm"],
        "within_tolerance": gap <= TOLERANCE * max(1.0, abs(ref["loss"]))
        and lp_gap <= TOLERANCE * max(1.0, abs(ref["mean_logprob"]))
        and gn_gap <= 5 * TOLERANCE * ref["grad_norm"],
        "tokens_per_s_bf16": round(tps16, 1),
        "tokens_per_s_fp32": round(tps32, 1),
        "bf16_speedup": round(secs32 / secs16, 2),
        "tokens_per_s_fp32_cpu_first_step": round(ref["tokens"] / ref["seconds"], 1),
        "peak_mb_bf16": round(peak16, 1),
        "peak_mb_fp32": round(peak32, 1),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="where the bf16 side runs (cpu: a dry run)")
    ap.add_argument("--models", default="tiny,smollm2", help="comma-separated: tiny, smollm2")
    ap.add_argument("--steps", type=int, default=5, help="timed bf16 steps per model")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--completion-len", type=int, default=96)
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument(
        "--micro-batch-tokens",
        type=bench_update.tokens_arg,
        default=UpdateSection().micro_batch_tokens,
        help="update.micro_batch_tokens: a number, or auto (the default: 512 on the CPU, by the free memory on CUDA)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def main() -> int:
    args = parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"no CUDA device (torch {torch.__version__}): run this on a machine with an NVIDIA GPU, or --device cpu")
        return 2
    device = torch.device(args.device)
    figures = {}
    with tempfile.TemporaryDirectory(prefix="rlvr-gpu-check-") as tmp:
        for name in args.models.split(","):
            figures[name] = check_model(name, args, device, Path(tmp))
            for k, v in figures[name].items():  # as each model ends: a GPU session may be cut short
                print(f"{name}_{k}: {v}")
    write_result(
        args.out,
        figures,
        echo=False,  # printed above, model by model
        tolerance=TOLERANCE,
        machine=machine_info(gpu=torch.cuda.get_device_name(0) if device.type == "cuda" else None),
        versions={p: version(p) for p in ("torch", "transformers")},
        settings=vars(args),
    )
    print(f"wrote {args.out}")
    return 0 if all(f["within_tolerance"] for f in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
