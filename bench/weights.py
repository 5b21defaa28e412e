"""What moving policy weights through the run store costs per iteration, from two real versions.

    .venv/bin/python bench/weights.py            # SmolLM2 recipe, 2 updates of 16 prompts x 8: ~8 min on 2 cores
    .venv/bin/python bench/weights.py --recipe recipes/tiny-demo.toml --prompts 2 --out /tmp/w.json   # seconds (a test)

A run of the recipe (the transformers engine, no evaluation, dynamic sampling off) trains
`--iterations` updates in this process (prepare, then rollout, verify and update per iteration),
so its policy folder holds v0 .. vN. For each consecutive pair v_i -> v_{i+1}, from the files and
the update's commit record:

- what one version is as stored: every file of policy/v_{i+1}/ (weights, config, tokenizer,
  trainer_state.pt), which the update uploads whole;
- what a rollout worker downloads for it (rlvr.store.commit.fetch_policy): every committed file
  of the folder whose sha256 its cache lacks but trainer_state.pt, which only the update reads;
- the store traffic per iteration with K rollout workers: one upload + K downloads, and the same
  if the workers fetched the whole version (as rlvr did before), a bf16 copy, or a delta of the
  bf16 bits (the update still uploading the whole version, plus the copy or the delta);
- how fast this machine takes the sha256 of the weights file, which the commit does to every file
  it uploads and a worker to every file it downloads (rlvr.store);
- what a delta would save: the fraction of fp32 elements whose bits changed, the same after both
  versions are cast to bf16 (what a bf16 engine would receive), the size of a sparse delta (an
  int32 index and a bf16 value per changed element), and the zlib and zstd sizes of the XOR of
  the two versions' bits (bf16 and fp32), compressed tensor by tensor.

Measured only: rlvr ships whole versions. The figures of the last pair are the headline (its
optimiser has moments, as every later step does; the first step of AdamW moves every weight by
about lr). Writes bench/results/weights.json (bench/README.md's conventions).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zlib
from pathlib import Path

from machine import write_result  # bench/machine.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULTS = Path(__file__).parent / "results" / "weights.json"
WEIGHTS = "model.safetensors"
ZLIB_LEVEL, ZSTD_LEVEL = 1, 3  # the fast levels: a delta is made once per version, on the trainer's clock


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", type=Path, default=Path(__file__).resolve().parents[1] / "recipes" / "smollm2-arithmetic.toml")
    ap.add_argument("--iterations", type=int, default=2, help="updates to train: pairs v0->v1 .. v(N-1)->vN")
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--workers", default="1,2,4,8", help="K rollout workers to state the traffic for")
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def train(folder: Path, args: argparse.Namespace) -> tuple[Path, list[float]]:
    """The recipe trained for args.iterations updates in this process; returns the run folder and
    each update's seconds."""
    from rlvr import stages
    from rlvr.checks.start import create_or_open
    from rlvr.config import Config
    from rlvr.config.load import load_config

    data = load_config(args.recipe).model_dump()
    data["rollout"] |= {
        "prompts_per_iteration": args.prompts,
        "max_new_tokens": args.max_new_tokens,
        "dynamic_sampling_rounds": 0,
        "engine": "transformers",  # needs no vLLM install; the engine does not change what the update writes
        "device": "cpu",
    }
    data["eval"]["every"] = 0
    data["checkpoint"] |= {"keep_last": 0}  # keep every version's weights to compare
    run = create_or_open(folder, Config.model_validate(data), args.iterations)
    root = str(run.paths.root)
    stages.prepare(root)
    seconds = []
    for i in range(args.iterations):
        stages.rollout(root, i)
        stages.verify(root, i)
        t0 = time.perf_counter()
        stages.update(root, i)
        seconds.append(time.perf_counter() - t0)
        print(f"# update({i}): {seconds[-1]:.1f} s", file=sys.stderr, flush=True)
    return run.paths.root, seconds


def version_files(root: Path, version: int) -> dict[str, dict]:
    """Policy v_version's committed files, from the record that committed it: name -> bytes, sha256."""
    from rlvr.schema import PREPARE, UPDATE, RunPaths
    from rlvr.store.records import read_record

    paths = RunPaths(root=root)
    rec = read_record(paths.record(PREPARE, None) if version == 0 else paths.record(UPDATE, version - 1))
    inside = f"{paths.policy_dir(version).relative_to(root)}/"
    return {o.path[len(inside) :]: {"bytes": o.bytes, "sha256": o.sha256} for o in rec.outputs if o.path.startswith(inside)}


def _zstd(data: bytes) -> int:
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=ZSTD_LEVEL).compress(data).size


def tensor_delta(old: dict, new: dict) -> dict:
    """Element counts and delta sizes between two state dicts of fp32 tensors (same names, shapes)."""
    import torch

    out = {"elements": 0, "fp32_tensor_bytes": 0, "fp32_changed": 0, "bf16_changed": 0, "tensors": len(new)}
    out |= {k: 0 for k in ("bf16_xor_zlib_bytes", "bf16_xor_zstd_bytes", "fp32_xor_zstd_bytes", "tensors_bf16_unchanged")}
    encode_s = 0.0
    for name in sorted(new):
        a, b = old[name].contiguous(), new[name].contiguous()
        if a.dtype != torch.float32 or b.dtype != torch.float32 or a.shape != b.shape:
            raise SystemExit(f"{name}: {a.dtype}{tuple(a.shape)} -> {b.dtype}{tuple(b.shape)}; this bench compares fp32 tensors")
        out["elements"] += b.numel()
        out["fp32_tensor_bytes"] += b.numel() * 4
        xor32 = a.view(torch.int32) ^ b.view(torch.int32)  # bits, not values: -0.0 and NaN count as stored
        out["fp32_changed"] += int((xor32 != 0).sum())
        xor16 = a.bfloat16().view(torch.int16) ^ b.bfloat16().view(torch.int16)  # round-to-nearest casts, as .to(bf16)
        changed = int((xor16 != 0).sum())
        out["bf16_changed"] += changed
        out["tensors_bf16_unchanged"] += changed == 0
        t0 = time.perf_counter()
        raw16 = xor16.numpy().tobytes()
        out["bf16_xor_zlib_bytes"] += len(zlib.compress(raw16, ZLIB_LEVEL))
        out["bf16_xor_zstd_bytes"] += _zstd(raw16)
        out["fp32_xor_zstd_bytes"] += _zstd(xor32.numpy().tobytes())
        encode_s += time.perf_counter() - t0
    out["bf16_tensor_bytes"] = out["elements"] * 2
    out["sparse_delta_bytes"] = out["bf16_changed"] * (4 + 2)  # an int32 flat index and the new bf16 value each
    out["fp32_changed_fraction"] = round(out["fp32_changed"] / out["elements"], 6)
    out["bf16_changed_fraction"] = round(out["bf16_changed"] / out["elements"], 6)
    out["encode_s"] = round(encode_s, 2)  # the three compressions, this CPU, one thread each
    return out


def bf16_file_bytes(tensors: dict) -> int:
    """The size of a bf16 copy written as the engines would read it: one safetensors file."""
    import torch
    from safetensors.torch import save_file

    with tempfile.TemporaryDirectory(prefix="rlvr-bench-weights-") as tmp:
        path = Path(tmp) / WEIGHTS
        save_file({k: v.to(torch.bfloat16).contiguous() for k, v in tensors.items()}, str(path))
        return path.stat().st_size


def pair(root: Path, i: int, workers: list[int]) -> dict:
    """v_i -> v_{i+1}: what is stored, what moves, what a delta would move."""
    from safetensors.torch import load_file

    from rlvr.files import file_sha256
    from rlvr.schema import TRAINER_STATE, RunPaths

    before, after = version_files(root, i), version_files(root, i + 1)
    cached = {f["sha256"] for f in before.values()}  # a worker that sampled v_i holds these objects
    changed = {n: f["bytes"] for n, f in after.items() if f["sha256"] not in cached}
    fetched = {n: b for n, b in changed.items() if n != TRAINER_STATE}  # what an engine reads of it
    version_bytes = sum(f["bytes"] for f in after.values())
    download = sum(fetched.values())
    paths = RunPaths(root=root)
    old = load_file(str(paths.policy_dir(i) / WEIGHTS))
    new = load_file(str(paths.policy_dir(i + 1) / WEIGHTS))
    delta = tensor_delta(old, new)
    bf16_bytes = bf16_file_bytes(new)
    t0 = time.perf_counter()
    file_sha256(paths.policy_dir(i + 1) / WEIGHTS)  # what a commit and every download do to each file
    sha256_s = time.perf_counter() - t0
    zstd_delta = delta["bf16_xor_zstd_bytes"]
    traffic = {
        str(k): {
            "whole_version": version_bytes + k * sum(changed.values()),
            "weights_only": version_bytes + k * download,
            "bf16_copy": version_bytes + bf16_bytes + k * bf16_bytes,
            "bf16_xor_zstd_delta": version_bytes + zstd_delta + k * zstd_delta,
        }
        for k in workers
    }
    return {
        "from": i,
        "to": i + 1,
        "files": {n: f["bytes"] for n, f in sorted(after.items())},
        "version_bytes": version_bytes,
        "weights_bytes": after[WEIGHTS]["bytes"],
        "trainer_state_bytes": after.get(TRAINER_STATE, {}).get("bytes", 0),
        "download_per_worker_bytes": download,
        "downloaded_files": sorted(fetched),
        "bf16_copy_bytes": bf16_bytes,
        "sha256_mb_per_s": round(after[WEIGHTS]["bytes"] / 1e6 / sha256_s, 1),
        "delta": delta,
        "traffic_per_iteration_bytes": traffic,
    }


def main() -> int:
    args = parse_args()
    workers = [int(k) for k in args.workers.split(",")]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rlvr-bench-weights-") as tmp:
        root, update_s = train(Path(tmp) / "run", args)
        pairs = [pair(root, i, workers) for i in range(args.iterations)]
    last = pairs[-1]
    d = last["delta"]
    figures = {
        "version_bytes": last["version_bytes"],
        "weights_bytes": last["weights_bytes"],
        "trainer_state_bytes": last["trainer_state_bytes"],
        "download_per_worker_bytes": last["download_per_worker_bytes"],
        "bf16_copy_bytes": last["bf16_copy_bytes"],
        "fp32_changed_fraction": d["fp32_changed_fraction"],
        "bf16_changed_fraction": d["bf16_changed_fraction"],
        "sparse_delta_bytes": d["sparse_delta_bytes"],
        "bf16_xor_zlib_bytes": d["bf16_xor_zlib_bytes"],
        "bf16_xor_zstd_bytes": d["bf16_xor_zstd_bytes"],
        "fp32_xor_zstd_bytes": d["fp32_xor_zstd_bytes"],
        "bf16_xor_zstd_ratio": round(last["weights_bytes"] / d["bf16_xor_zstd_bytes"], 2),
        **{f"traffic_{k}workers_bytes": v["weights_only"] for k, v in last["traffic_per_iteration_bytes"].items()},
        **{f"traffic_whole_version_{k}workers_bytes": v["whole_version"] for k, v in last["traffic_per_iteration_bytes"].items()},
        "sha256_mb_per_s": last["sha256_mb_per_s"],
        "update_s": round(update_s[-1], 2),
        "delta_encode_s": d["encode_s"],
    }
    import pyarrow
    import safetensors
    import torch

    write_result(
        args.out,
        figures,
        pairs=pairs,
        update_s=[round(s, 2) for s in update_s],
        versions={"torch": torch.__version__, "safetensors": safetensors.__version__, "pyarrow": pyarrow.__version__},
        settings={k: str(v) for k, v in vars(args).items()}
        | {
            "zlib_level": ZLIB_LEVEL,
            "zstd_level": ZSTD_LEVEL,
            "engine": "transformers",
            "seconds": round(time.perf_counter() - t0, 1),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
