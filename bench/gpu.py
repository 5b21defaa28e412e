"""The update on a GPU: rlvr's against TRL's GRPOTrainer on the same card and rows, in two shapes.

    bash scripts/gpu-check.sh                   # one NVIDIA GPU, no network, under 8 minutes
    python bench/gpu.py --device cpu --shapes tiny --steps 1 --out /tmp/g.json   # the CPU dry run (a test)

For each shape (random weights, built here; SmolLM2-135M's and Qwen2.5-1.5B's, whose update state of
~25 GB fits half of an 80 GB card), bench/update.py runs, on --device, the same synthetic rows through:
  - ours, as a run gets them on that device: update.micro_batch_tokens and update.packing on "auto"
    (rlvr.train.budget), in fp32 (`ours-auto`) and with bf16 autocast (`ours-auto-bf16`);
  - TRL's GRPOTrainer loss + backward + optimiser step with its own defaults on a GPU (bf16, gradient
    checkpointing, per_device_train_batch_size 8), when trl imports here;
each side in its own process, alternating, after a warm-up step (bench/update.py's docstring).

Per side: completion tokens/s, MFU, peak memory and the micro-batches used. MFU = the model FLOPs of
a step / its seconds / the card's peak dense bf16 FLOP/s (PEAK_BF16_TFLOPS, named in the JSON; the
fp32 side is measured against the same peak). Model FLOPs (step_flops) count what the step must
compute, not what it recomputes: forward + backward = 3x the forward's 2 FLOPs a weight and token,
for every decoder weight on every prompt and completion token, causal attention's 6 * layers *
hidden * T^2 a row, and the LM head on completion tokens only (both sides compute logits only there).

As context, the transformers rollout engine's sampled tokens/s on the SmolLM2 shape (vLLM's CUDA
build does not travel to the GPU machine this was prepared for: unmeasured here).

Prints `key: value` lines and writes bench/results/gpu-<card>.json after each shape (a timeout keeps
what finished): those figures, each shape's in `shapes`, with the goals of issue 41 checked in `goals`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import update as bench_update
from machine import write_result  # bench/machine.py

from rlvr.rollout.engines import TransformersEngine
from rlvr.rollout.sampler import Request, Sampling

HERE = Path(__file__).parent
SHAPES = {  # bench/update.py's model arguments
    "tiny": {"hidden": 128, "layers": 2, "vocab": 2048, "intermediate": 0, "heads": 0, "kv_heads": 0},
    "smollm2-135m": {"hidden": 576, "layers": 30, "vocab": 49152, "intermediate": 1536, "heads": 9, "kv_heads": 3},
    "qwen2.5-1.5b": {"hidden": 1536, "layers": 28, "vocab": 151936, "intermediate": 8960, "heads": 12, "kv_heads": 2},
}
BATCH = {  # prompts, group, longest prompt, longest completion (lengths drawn from [len/2, len])
    "tiny": (4, 4, 32, 64),
    "smollm2-135m": (16, 8, 128, 512),
    "qwen2.5-1.5b": (8, 8, 128, 512),
}
# dense bf16 tensor-core peaks from NVIDIA's data sheets (without sparsity), by a part of the device name
PEAK_BF16_TFLOPS = [
    ("H200", 989.4),
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.5),
    ("H100", 989.4),  # SXM
    ("A100", 312.0),
    ("L40S", 362.1),
    ("L4", 121.0),
    ("A10", 125.0),
    ("RTX 4090", 165.2),
]
GOALS = {"smollm2_tokens_per_s": 20000.0, "smollm2_vs_gpu_check": 10.0, "qwen_mfu": 0.30, "vs_trl": 1.3}
GPU_CHECK_TOKENS_PER_S = 1994.5  # bench/results/gpu-check.json: SmolLM2's shape, fp32, H200, before this benchmark


def peak_tflops(name: str | None) -> tuple[float | None, str]:
    """The card's peak dense bf16 TFLOP/s, and where the figure comes from."""
    for part, tflops in PEAK_BF16_TFLOPS:
        if name and part in name:
            return tflops, f"data sheet ({part})"
    return None, f"unknown card {name!r}: pass --peak-tflops"


def step_flops(lengths: list[list[int]], conf: dict) -> float:
    """Model FLOPs of one update step over rows of (prompt, completion) lengths (the module docstring)."""
    h, L, V = conf["hidden_size"], conf["num_hidden_layers"], conf["vocab_size"]
    heads = conf["num_attention_heads"]
    kv = conf.get("num_key_value_heads", heads) * conf.get("head_dim", h // heads)
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * conf["intermediate_size"]  # q, o; k, v; gate, up, down
    flops = 0.0
    for p, r in lengths:
        t = p + r
        flops += 6 * L * per_layer * t + 6 * L * h * t * t + 6 * h * V * r
    return flops


def run_shape(name: str, args: argparse.Namespace, work: Path, trl: bool) -> dict:
    """bench/update.py on one shape; its figures with MFU added per side."""
    prompts, group, plen, clen = BATCH[name]
    out = work / f"update-{name}.json"
    cmd = [sys.executable, str(HERE / "update.py"), "--device", args.device, "--layouts", "auto,auto-bf16"]
    cmd += [f"--{k.replace('_', '-')}={v}" for k, v in SHAPES[name].items()]
    cmd += ["--prompts", str(prompts), "--group", str(group), "--prompt-len", str(plen), "--completion-len", str(clen)]
    cmd += ["--repeats", str(args.steps), "--out", str(out)]
    cmd += (["--trl-bf16"] if args.device == "cuda" else []) + ([] if trl else ["--no-trl"])
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, timeout=args.shape_timeout)
    raw = json.loads(out.read_text())
    flops = step_flops(raw["lengths"], raw["model_config"])
    peak = args.peak_tflops * 1e12 if args.peak_tflops else None
    fig = {"wall_s": round(time.perf_counter() - t0, 1), "step_model_tflop": round(flops / 1e12, 4)}
    fig |= {"rows": len(raw["lengths"]), "completion_tokens": raw["figures"]["tokens"]}
    for side, steps in raw["runs"].items():
        key = side.replace("-", "_")
        secs = raw["figures"][f"{key}_s"]
        fig[f"{key}_tokens_per_s"] = raw["figures"][f"{key}_tokens_per_s"]
        fig[f"{key}_mfu"] = round(flops / secs / peak, 4) if peak else None
        fig[f"{key}_peak_mb"] = raw["figures"][f"{key}_maxrss_mb"]
        fig[f"{key}_micro_batches"] = steps[-1]["micro_batches"]
        if "micro_batch_tokens" in steps[-1]:
            fig[f"{key}_micro_batch_tokens"] = steps[-1]["micro_batch_tokens"]
    fig |= {k: v for k, v in raw["figures"].items() if k.startswith("ratio_") or k.startswith("bf16_speedup")}
    fig["settings"] = raw["settings"]
    return fig


def rollout_tokens_per_s(args: argparse.Namespace, work: Path) -> dict:
    """The transformers engine's sampled tokens/s on the SmolLM2 shape (or tiny, on the CPU dry run)."""
    shape = "tiny" if "tiny" in args.shapes.split(",") else "smollm2-135m"
    margs = bench_update.parse_args([f"--{k.replace('_', '-')}={v}" for k, v in SHAPES[shape].items()])
    path = bench_update.build_model(margs, work / "rollout")
    engine = TransformersEngine(path, torch.device(args.device), batch_size=args.rollout_prompts)
    g = torch.Generator().manual_seed(0)
    reqs = [
        Request(f"p{k}", 0, torch.randint(8, SHAPES[shape]["vocab"], (64,), generator=g).tolist(), k)
        for k in range(args.rollout_prompts)
    ]
    sampling = Sampling(max_new_tokens=args.rollout_tokens, temperature=1.0, top_p=1.0)
    list(engine.generate(reqs[:2], sampling))  # warm-up: kernels, allocator
    t0 = time.perf_counter()
    tokens = sum(len(s.token_ids) for batch in engine.generate(reqs, sampling) for _, s in batch)
    secs = time.perf_counter() - t0
    engine.close()
    return {
        "shape": shape,
        "prompts": len(reqs),
        "max_new_tokens": args.rollout_tokens,
        "tokens": tokens,
        "tokens_per_s": round(tokens / secs, 1),
    }


def goals(shapes: dict) -> dict:
    """Issue 41's goals, each with its figure and whether it held (None: not measured in this run)."""
    out: dict = {}
    if smol := shapes.get("smollm2-135m"):
        best = max(smol.get("ours_auto_tokens_per_s", 0), smol.get("ours_auto_bf16_tokens_per_s", 0))
        out["smollm2_tokens_per_s"] = {
            "figure": best,
            "goal": GOALS["smollm2_tokens_per_s"],
            "held": best >= GOALS["smollm2_tokens_per_s"],
        }
        ratio = best / GPU_CHECK_TOKENS_PER_S
        out["smollm2_vs_gpu_check"] = {
            "figure": round(ratio, 2),
            "goal": GOALS["smollm2_vs_gpu_check"],
            "held": ratio >= GOALS["smollm2_vs_gpu_check"],
        }
    if (qwen := shapes.get("qwen2.5-1.5b")) and qwen.get("ours_auto_bf16_mfu") is not None:
        mfu = qwen["ours_auto_bf16_mfu"]
        out["qwen_mfu"] = {"figure": mfu, "goal": GOALS["qwen_mfu"], "held": mfu >= GOALS["qwen_mfu"]}
    for name, fig in shapes.items():
        if "ratio_ours_auto_bf16" in fig:
            r = fig["ratio_ours_auto_bf16"]
            out[f"vs_trl_{name}"] = {"figure": r, "goal": GOALS["vs_trl"], "held": r >= GOALS["vs_trl"]}
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a dry run of every path (tests)")
    ap.add_argument("--shapes", default="smollm2-135m,qwen2.5-1.5b", help=f"comma-separated: {', '.join(SHAPES)}")
    ap.add_argument("--steps", type=int, default=3, help="timed steps a side, after one warm-up step")
    ap.add_argument("--no-trl", action="store_true", help="ours only (without this, TRL runs when it imports)")
    ap.add_argument("--peak-tflops", type=float, help="the card's peak dense bf16 TFLOP/s (default: by its name)")
    ap.add_argument("--rollout-prompts", type=int, default=64)
    ap.add_argument("--rollout-tokens", type=int, default=128)
    ap.add_argument("--shape-timeout", type=float, default=300, help="seconds a shape may take")
    ap.add_argument("--out", type=Path, help="default: bench/results/gpu-<card>.json")
    return ap.parse_args(argv)


def main() -> int:
    args = parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"no CUDA device (torch {torch.__version__}): run this on a machine with an NVIDIA GPU, or --device cpu")
        return 2
    card = torch.cuda.get_device_name(0) if args.device == "cuda" else None
    if args.peak_tflops is None:
        args.peak_tflops, peak_source = peak_tflops(card)
    else:
        peak_source = "--peak-tflops"
    trl_probe = subprocess.run([sys.executable, "-c", "import trl.trainer.grpo_trainer"], capture_output=True, text=True)
    trl = not args.no_trl and trl_probe.returncode == 0
    slug = (card or "cpu").lower().replace("nvidia ", "").split()[0]
    out = args.out or HERE / "results" / f"gpu-{slug}.json"
    sections: dict = {
        "shapes": {},
        "card": card,
        "peak_bf16_dense_tflops": args.peak_tflops,
        "peak_source": peak_source,
        "trl": "ran" if trl else ("--no-trl" if args.no_trl else f"not importable: {trl_probe.stderr.strip().splitlines()[-1:]}"),
    }
    versions = {p: bench_update.package_version(p) for p in ("torch", "transformers", "trl", "accelerate", "flash-attn")}

    def write(echo: bool) -> None:
        write_result(out, figures(sections), echo=echo, versions=versions, settings=vars(args) | {"out": out}, **sections)

    with tempfile.TemporaryDirectory(prefix="rlvr-gpu-") as tmp:
        for name in args.shapes.split(","):
            sections["shapes"][name] = run_shape(name, args, Path(tmp), trl)
            sections["goals"] = goals(sections["shapes"])
            write(echo=False)  # after each shape: a timeout keeps what finished
        sections["rollout_transformers"] = rollout_tokens_per_s(args, Path(tmp))
    write(echo=True)
    print(f"wrote {out}")
    return 0


def figures(sections: dict) -> dict:
    """The figures as printed: each shape's as <shape>_<key> (its update.py settings aside), the rollout's
    tokens/s, each goal as goal_<name>."""
    out = {f"{name}_{k}": v for name, fig in sections["shapes"].items() for k, v in fig.items() if k != "settings"}
    if "rollout_transformers" in sections:
        out["rollout_transformers_tokens_per_s"] = sections["rollout_transformers"]["tokens_per_s"]
    return out | {f"goal_{k}": v for k, v in sections.get("goals", {}).items()}


if __name__ == "__main__":
    sys.exit(main())
