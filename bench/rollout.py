"""Rollout throughput: vLLM (its own venv, CPU build here) vs rlvr's transformers engine.

Same model, same prompts, same sampling, in one run, alternating the two engines:
    transformers, vLLM (cold start), transformers, vLLM (warm: new weights reloaded in place)

    .venv/bin/python bench/rollout.py                  # defaults: SmolLM2-135M-shaped random Llama
    .venv/bin/python bench/rollout.py --layers 4 --prompts 8    # quicker
    .venv/bin/python bench/rollout.py --vllm-dtypes float32,bfloat16   # + vLLM in bf16, same run

With several --vllm-dtypes, each further dtype gets its own cold vLLM engine on the same prompts after
the runs above: figures vllm_<dtype>_tokens_per_s and <dtype>_vs_<first>_ratio (generation only).

Needs the vLLM venv (`make vllm`). Prints `key: value` lines (BENCH.md) and writes
bench/results/rollout.json. Generation tokens/s count sampled tokens only; a random model rarely
emits EOS, so every response runs to --max-tokens and both engines do the same work.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import write_result  # bench/machine.py

from rlvr.config import Config, RolloutSection
from rlvr.models.tiny import build_tokenizer
from rlvr.rollout import engines
from rlvr.rollout.sampler import Request, Sampling
from rlvr.seeds import derive_seed


def build_model(out: Path, *, hidden: int, layers: int, heads: int, kv_heads: int, inter: int, seed: int) -> Path:
    tok = build_tokenizer([f"What is {a} + {b}?" for a in range(30) for b in range(30)])
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=49152,
        hidden_size=hidden,
        intermediate_size=inter,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=hidden // heads,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def perturbed_copy(src: Path, out: Path) -> Path:
    model = LlamaForCausalLM.from_pretrained(src)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 1e-3)
    model.save_pretrained(out)
    for f in src.glob("tokenizer*"):
        (out / f.name).write_bytes(f.read_bytes())
    for f in src.glob("*.jinja"):
        (out / f.name).write_bytes(f.read_bytes())
    return out


def timed_generate(engine: engines.Engine, reqs: list[Request], sampling: Sampling) -> tuple[float, int]:
    t0 = time.perf_counter()
    tokens = sum(len(s.token_ids) for batch in engine.generate(reqs, sampling) for _, s in batch)
    return time.perf_counter() - t0, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=576)
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--heads", type=int, default=9)
    ap.add_argument("--kv-heads", type=int, default=3)
    ap.add_argument("--intermediate", type=int, default=1536)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--prompt-tokens", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--batch-size", type=int, default=64, help="transformers engine batch")
    ap.add_argument("--vllm-python", default="", help="default: the venv of `make vllm`")
    ap.add_argument(
        "--vllm-dtypes", default="float32", help="comma-separated rollout.vllm_dtype values; the first is the main one"
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "rollout.json")
    args = ap.parse_args()

    dtypes = args.vllm_dtypes.split(",")
    rollout = RolloutSection(engine="vllm", python=args.vllm_python, batch_size=args.batch_size, vllm_dtype=dtypes[0])
    python = engines.interpreter(rollout)
    if not engines.has_vllm(python):
        sys.exit(f"no vLLM interpreter ({python}); run `make vllm` first or pass --vllm-python")
    sampling = Sampling(args.max_tokens, 1.0, 1.0)
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-rollout-") as tmp:
        v0 = build_model(
            Path(tmp) / "v0",
            hidden=args.hidden,
            layers=args.layers,
            heads=args.heads,
            kv_heads=args.kv_heads,
            inter=args.intermediate,
            seed=0,
        )
        v1 = perturbed_copy(v0, Path(tmp) / "v1")
        g = torch.Generator().manual_seed(0)
        prompts = [torch.randint(300, 49152, (args.prompt_tokens,), generator=g).tolist() for _ in range(args.prompts)]
        reqs = [
            Request(f"p{k}", s, prompts[k], derive_seed(0, 0, f"p{k}", s))
            for k in range(args.prompts)
            for s in range(args.group_size)
        ]
        max_len = args.prompt_tokens + args.max_tokens + 8
        hf_s, hf_tok, vllm_s, vllm_tok = [], [], [], []

        def run_hf(policy: Path) -> None:
            t0 = time.perf_counter()
            eng = engines.TransformersEngine(policy, torch.device("cpu"), args.batch_size)
            load = time.perf_counter() - t0
            secs, toks = timed_generate(eng, reqs, sampling)
            hf_s.append(secs), hf_tok.append(toks)
            print(f"transformers: load {load:.1f}s, {toks} tokens in {secs:.1f}s", file=sys.stderr)

        run_hf(v0)
        cold = engines.acquire(rollout, v0, device=torch.device("cpu"), seed=0, max_model_len=max_len)
        cold_gen, toks = timed_generate(cold.engine, reqs, sampling)
        vllm_s.append(cold_gen), vllm_tok.append(toks)
        print(f"vllm cold: start {cold.start_seconds:.1f}s, {toks} tokens in {cold_gen:.1f}s", file=sys.stderr)
        run_hf(v1)
        warm = engines.acquire(rollout, v1, device=torch.device("cpu"), seed=0, max_model_len=max_len)
        assert warm.warm, "the engine was not reused"
        warm_gen, toks = timed_generate(warm.engine, reqs, sampling)
        vllm_s.append(warm_gen), vllm_tok.append(toks)
        print(f"vllm warm: reload {warm.weight_load_seconds:.2f}s, {toks} tokens in {warm_gen:.1f}s", file=sys.stderr)
        version = cold.engine.version
        engines.close_all()
        other_tps = {}
        for dtype in dtypes[1:]:  # the same prompts and sampling, a cold engine in another dtype
            other = engines.acquire(
                rollout.model_copy(update={"vllm_dtype": dtype}), v1, device=torch.device("cpu"), seed=0, max_model_len=max_len
            )
            secs, toks = timed_generate(other.engine, reqs, sampling)
            other_tps[dtype] = toks / secs
            print(f"vllm {dtype}: start {other.start_seconds:.1f}s, {toks} tokens in {secs:.1f}s", file=sys.stderr)
            engines.close_all()

    hf_tps = statistics.median(t / s for t, s in zip(hf_tok, hf_s, strict=True))
    vllm_tps = statistics.median(t / s for t, s in zip(vllm_tok, vllm_s, strict=True))
    cold_iter, warm_iter = cold.start_seconds + cold_gen, warm.weight_load_seconds + warm_gen
    figures = {
        "transformers_tokens_per_s": round(hf_tps, 1),
        "vllm_tokens_per_s": round(vllm_tps, 1),
        "ratio": round(vllm_tps / hf_tps, 3),
        "vllm_engine_start_s": round(cold.start_seconds, 2),
        "vllm_weight_reload_s": round(warm.weight_load_seconds, 3),
        "cold_iteration_s": round(cold_iter, 2),
        "warm_iteration_s": round(warm_iter, 2),
        "warm_vs_cold_ratio": round(cold_iter / warm_iter, 3),
    }
    warm_tps = vllm_tok[-1] / warm_gen  # the same v1 weights the other dtypes load
    for dtype, tps in other_tps.items():
        figures[f"vllm_{dtype}_tokens_per_s"] = round(tps, 1)
        figures[f"{dtype}_vs_{dtypes[0]}_ratio"] = round(tps / warm_tps, 3)
    write_result(
        args.out,
        figures,
        versions={
            "torch": torch.__version__,
            "transformers": md.version("transformers"),
            "vllm": version,
            "rlvr": md.version("rlvr"),
            "default_config_hash": Config().hash(),
        },
        settings=vars(args),
    )


if __name__ == "__main__":  # vLLM's CPU backend spawns processes: keep the guard
    main()
