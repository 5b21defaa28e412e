"""The update step on the real tiny model: gradient direction, accumulation, schedule,
variants, 1 vs 2 processes (torchrun + gloo), and bit-exact resume after a SIGKILL."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config, UpdateSection
from rlvr.models.load import load_policy
from rlvr.problems.prompts import chat_ids
from rlvr.store.commit import FAULT_ENV
from rlvr.train.batch import TrainRow, collate, micro_batches
from rlvr.train.logprobs import policy_token_logprobs
from rlvr.train.loop import grpo_steps
from rlvr.train.optim import lr_factor, make_optimizer, own_memory
from rlvr.train.update import UpdateSpec, run_update
from tests.helpers import ROOT


def read_metrics(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _seq_logprob(model, row: TrainRow, pad: int) -> float:
    batch = collate([row], pad, torch.device("cpu"))
    with torch.no_grad():
        lp = policy_token_logprobs(model, batch)
    return float((lp * batch["mask"]).sum())


def _steps(model, rows, cfg: UpdateSection, pad: int, **kw) -> list[dict]:
    opt, sched, _ = make_optimizer(model, cfg, None)
    return grpo_steps(model, opt, sched, rows, cfg=cfg, temperature=1.0, pad_id=pad, norm_constant=16.0, **kw)


def _good_bad(model, tok) -> list[TrainRow]:
    prompt = chat_ids(tok, "What is 3 + 4? Put the final answer inside <answer></answer>.")
    rows = []
    for text, adv in (("<answer>7</answer>", 1.0), ("<answer>8</answer>", -1.0)):
        resp = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        r = TrainRow(prompt, resp, [0.0] * len(resp), adv)
        batch = collate([r], tok.pad_token_id, torch.device("cpu"))
        with torch.no_grad():  # old logprobs = current policy's, as right after rollout
            old = policy_token_logprobs(model, batch)[batch["mask"].bool()].tolist()
        rows.append(TrainRow(prompt, resp, old, adv))
    return rows


@pytest.mark.parametrize("aggregation", ["token_mean", "seq_mean", "seq_sum_norm"])
def test_one_update_raises_positive_and_lowers_negative(tiny_model: Path, aggregation: str) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    model.eval()
    rows = _good_bad(model, tok)
    before = [_seq_logprob(model, r, tok.pad_token_id) for r in rows]
    (m,) = _steps(model, rows, UpdateSection(lr=1e-3, minibatches=1, aggregation=aggregation), tok.pad_token_id)
    after = [_seq_logprob(model, r, tok.pad_token_id) for r in rows]
    # First order, an Adam step moves logp(+) - logp(-) by lr * sum|g(+) - g(-)| > 0; each side alone may move
    # either way (the two responses share every token but the digit, and which way depends on the model
    # this machine built), so the margin is what must grow.
    assert after[0] - after[1] > before[0] - before[1]
    assert m["ratio_mean"] == pytest.approx(1.0, abs=1e-5)  # on-policy first step
    assert m["logprob_diff_max"] < 1e-4  # the "engine" logprobs were the trainer's own
    assert m["tokens"] == sum(len(r.response_ids) for r in rows) and m["sequences"] == 2 and m["grad_norm"] > 0
    assert m["entropy"] > 0 and m["kl"] is None and m["tis_weight_mean"] is None


def test_kl_tis_and_epochs_run_and_report(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    ref, _ = load_policy(tiny_model, torch.device("cpu"))
    rows = _good_bad(model, tok)
    cfg = UpdateSection(lr=1e-2, minibatches=1, epochs=3, kl_beta=0.1, tis_cap=2.0, eps_high=0.28, dual_clip=3.0)
    ms = _steps(model, rows, cfg, tok.pad_token_id, ref_model=ref)
    assert [m["epoch"] for m in ms] == [0, 1, 2]
    assert ms[0]["kl"] == pytest.approx(0.0, abs=1e-6) and ms[2]["kl"] > 0  # drifts away from the reference
    assert ms[0]["tis_weight_mean"] == pytest.approx(1.0, abs=1e-4)
    assert ms[2]["ratio_mean"] != pytest.approx(1.0, abs=1e-4)  # later epochs are off-policy: the ratio moves
    assert ms[1]["logprob_diff_mean"] is None  # measured once, before any step


def test_mask_truncated_leaves_them_out(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    good, bad = _good_bad(model, tok)
    rows = [good, TrainRow(bad.prompt_ids, bad.response_ids, bad.old_logprobs, bad.advantage, truncated=True)]
    (m,) = _steps(model, rows, UpdateSection(minibatches=1, mask_truncated=True), tok.pad_token_id)
    assert m["truncated_masked"] == 1 and m["sequences"] == 1


def test_micro_batches_respect_the_token_budget() -> None:
    rows = [TrainRow([1] * p, [2] * 3, [0.0] * 3, 1.0) for p in (2, 9, 4, 5, 1, 7)]
    mbs = micro_batches(rows, token_budget=20)
    assert sorted(r.length for mb in mbs for r in mb) == sorted(r.length for r in rows)
    for mb in mbs:
        assert len(mb) == 1 or len(mb) * max(r.length for r in mb) <= 20
    flat = [r.length for mb in mbs for r in mb]
    assert flat == sorted(flat)  # length-sorted: little padding


def test_micro_batches_accumulate_to_the_same_gradient(tiny_model: Path) -> None:
    _, tok = load_policy(tiny_model, torch.device("cpu"))
    prompt = chat_ids(tok, "What is 1 + 1? Put the final answer inside <answer></answer>.")
    rows = [
        TrainRow(
            prompt,
            tok(f"<answer>{k}</answer>", add_special_tokens=False)["input_ids"][: 3 + k % 3],
            [-1.0] * (3 + k % 3),
            float(k - 2),
        )
        for k in range(5)
    ]
    grads = []
    for budget in (10_000, 30):
        m, _ = load_policy(tiny_model, torch.device("cpu"))
        cfg = UpdateSection(micro_batch_tokens=budget, minibatches=1, max_grad_norm=1e9, lr=1e-12)
        (metrics,) = _steps(m, rows, cfg, tok.pad_token_id)
        assert metrics["micro_batches"] == (1 if budget == 10_000 else 5)
        grads.append(torch.cat([p.grad.flatten() for p in m.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-6)


def test_lr_schedule() -> None:
    cfg = UpdateSection(lr=1.0, warmup_steps=4, schedule="cosine", decay_steps=10, min_lr_ratio=0.1)
    assert [lr_factor(s, cfg) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_factor(4, cfg) == pytest.approx(1.0)
    assert lr_factor(9, cfg) == pytest.approx(0.1 + 0.9 * 0.5)  # half way
    assert lr_factor(14, cfg) == pytest.approx(0.1) and lr_factor(100, cfg) == pytest.approx(0.1)
    assert lr_factor(50, UpdateSection(warmup_steps=0)) == 1.0


# ---- whole updates on a real run ----------------------------------------------------------


def _cfg(small_config: Config, **update) -> Config:
    data = small_config.model_dump()
    data["update"].update(update)
    return Config.model_validate(data)


def _with_parity_reward(cfg: Config, folder: Path) -> Config:
    """cfg plus a reward plug-in that pays odd samples: every group then has reward variance, whatever
    the tiny model built on this machine samples (a test makes its own preconditions)."""
    parity = folder / "parity.sql"
    parity.write_text("SELECT prompt_id, sample_idx, (sample_idx % 2)::DOUBLE AS score, 'odd sample' AS reason FROM responses")
    data = cfg.model_dump()
    data["verify"]["rewards"] = [{"name": "parity", "sql": str(parity), "weight": 1.0}]
    return Config.model_validate(data)


def _sha(path: Path) -> str:
    return hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory, small_config: Config, tiny_model: Path) -> Path:
    d = tmp_path_factory.mktemp("scored") / "run"
    create_or_open(d, small_config, 1)
    stages.prepare(d)
    stages.rollout(d, 0)
    stages.verify(d, 0)
    return d.resolve()


def _odd_shards(run: Path, out: Path, n_rows: int) -> tuple[list[str], list[str]]:
    """Rollout and score shards holding exactly `n_rows` (odd) training rows, every one with signal:
    the first non-empty responses of `run`'s iteration 0, advantages +1/-1 alternating. The test
    makes its own batch instead of hoping the tiny model samples one (its lengths and rewards depend
    on the machine that built it)."""
    import pyarrow.compute as pc

    rollouts = pq.read_table(sorted(run.glob("rollouts/iteration=000000/*.parquet")), partitioning=None)
    rollouts = rollouts.filter(pc.greater(rollouts["num_response_tokens"], 0)).slice(0, n_rows)
    assert rollouts.num_rows == n_rows, "the scored run has too few non-empty responses"
    scores = pq.read_table(sorted(run.glob("scores/iteration=000000/*.parquet")), partitioning=None)
    keep = {(r["prompt_id"], r["sample_idx"]) for r in rollouts.select(["prompt_id", "sample_idx"]).to_pylist()}
    mask = [(r["prompt_id"], r["sample_idx"]) in keep for r in scores.select(["prompt_id", "sample_idx"]).to_pylist()]
    scores = scores.filter(mask)
    scores = scores.set_column(scores.schema.get_field_index("group_std"), "group_std", pa.array([1.0] * n_rows))
    adv = pa.array([1.0 if k % 2 else -1.0 for k in range(n_rows)], type=scores.schema.field("advantage").type)
    scores = scores.set_column(scores.schema.get_field_index("advantage"), "advantage", adv)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(rollouts, out / "rollouts.parquet")
    pq.write_table(scores, out / "scores.parquet")
    return [str(out / "rollouts.parquet")], [str(out / "scores.parquet")]


def _spec(run: Path, cfg: Config, out: Path) -> UpdateSpec:
    out.mkdir(parents=True, exist_ok=True)
    return UpdateSpec(
        config=cfg,
        iteration=0,
        seed=123,
        policy_in=str(run / "policy/v000000"),
        reference=str(run / "policy/v000000"),
        rollout_files=[str(p) for p in sorted(run.glob("rollouts/iteration=000000/*.parquet"))],
        score_files=[str(p) for p in sorted(run.glob("scores/iteration=000000/*.parquet"))],
        policy_out=str(out / "policy"),
        metrics_out=str(out / "metrics.parquet"),
    )


def test_two_gloo_processes_take_the_same_step_as_one(scored_run: Path, small_config: Config, tmp_path: Path) -> None:
    one = _spec(scored_run, _cfg(small_config, micro_batch_tokens=256, minibatches=2), tmp_path / "one")
    stats1 = run_update(one)
    two = _spec(scored_run, _cfg(small_config, micro_batch_tokens=256, minibatches=2, nproc=2), tmp_path / "two")
    stats2 = stages.launch_update(two, 2)
    assert stats2["world_size"] == 2 and stats1["sequences"] == stats2["sequences"] > 0
    from safetensors.torch import load_file

    a, b = load_file(Path(one.policy_out) / "model.safetensors"), load_file(Path(two.policy_out) / "model.safetensors")
    base = load_file(scored_run / "policy/v000000/model.safetensors")
    assert any(not torch.equal(a[k], base[k]) for k in a)  # the step did something
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6, rtol=1e-5), k
    m1, m2 = read_metrics(Path(one.metrics_out)), read_metrics(Path(two.metrics_out))
    for x, y in zip(m1, m2, strict=True):
        assert x["loss"] == pytest.approx(y["loss"], rel=1e-5, abs=1e-7)
        assert x["grad_norm"] == pytest.approx(y["grad_norm"], rel=1e-4)
        assert (x["tokens"], x["world_size"], y["world_size"]) == (y["tokens"], 1, 2)


def test_fsdp2_on_two_gloo_processes_matches_one_process_and_resumes(
    scored_run: Path, small_config: Config, tmp_path: Path
) -> None:
    """FSDP2 (sharded parameters, gradients, optimiser state) over 2 gloo processes: the same
    weights as one process, a checkpoint that is a plain HF folder, and a second update resumed
    from its full, name-keyed optimiser state that still matches one process."""
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    # 7 rows, 2 minibatches of 4 and 3, a micro-batch per row (budget 1 token): the minibatch of 3
    # gives one rank 2 micro-batches and the other 1 plus an FSDP2 filler pass
    rollout_files, score_files = _odd_shards(scored_run, tmp_path / "batch", 7)
    knobs = {"micro_batch_tokens": 1, "minibatches": 2, "tis_cap": 2.0, "kl_beta": 0.05}
    outs: dict[int, list[UpdateSpec]] = {1: [], 2: []}
    for nproc in (1, 2):
        policy_in = scored_run / "policy/v000000"
        for k in range(2):  # the second update starts from the first one's checkpoint (optimiser state included)
            spec = _spec(scored_run, _cfg(small_config, **knobs, nproc=nproc, strategy="fsdp2"), tmp_path / f"{nproc}-{k}")
            spec = spec.model_copy(
                update={"policy_in": str(policy_in), "rollout_files": rollout_files, "score_files": score_files}
            )
            stats = run_update(spec) if nproc == 1 else stages.launch_update(spec, nproc)
            assert stats["world_size"] == nproc and stats["sequences"] == 7
            outs[nproc].append(spec)
            policy_in = Path(spec.policy_out)
    assert [m["micro_batches"] for m in read_metrics(Path(outs[2][0].metrics_out))] == [4, 3]  # the 3: a filler pass ran
    state = torch.load(Path(outs[2][0].policy_out) / "trainer_state.pt", weights_only=True)
    assert state["optimizer_keys"] == "names" and "model.embed_tokens.weight" in state["optimizer"]["state"]
    hf = AutoModelForCausalLM.from_pretrained(outs[2][1].policy_out)  # a plain HF folder
    for one, two in zip(outs[1], outs[2], strict=True):
        a, b = load_file(Path(one.policy_out) / "model.safetensors"), load_file(Path(two.policy_out) / "model.safetensors")
        assert a.keys() == b.keys()
        # atol: 5% of one lr=1e-3 step. Adam's m/sqrt(v) amplifies the float noise of a different summation
        # order in near-zero gradients (1.7e-5 measured on one machine's tiny model after two updates); a
        # filler pass that added its gradient, or a micro-batch lost, moves whole tensors by ~lr
        for k in a:
            assert torch.allclose(a[k], b[k], atol=5e-5, rtol=1e-5), (k, float((a[k] - b[k]).abs().max()))
        for x, y in zip(read_metrics(Path(one.metrics_out)), read_metrics(Path(two.metrics_out)), strict=True):
            assert x["loss"] == pytest.approx(y["loss"], rel=1e-5, abs=1e-7)
            assert x["grad_norm"] == pytest.approx(y["grad_norm"], rel=1e-4)
    base = load_file(scored_run / "policy/v000000/model.safetensors")
    assert any(not torch.equal(a[k], base[k]) for k in a)  # the steps did something
    for name, p in hf.state_dict().items():
        assert torch.equal(p, b[name]) if name in b else name == "lm_head.weight", name  # tied to the embeddings


RESUMER = textwrap.dedent(
    """
    import sys
    from rlvr import stages
    d = sys.argv[1]
    stages.prepare(d)
    for i in range(3):
        stages.rollout(d, i); stages.verify(d, i); stages.update(d, i)
    """
)


@pytest.mark.slow
def test_exact_resume_after_kill(tmp_path: Path, small_config: Config, tiny_model: Path) -> None:
    """3 iterations straight == 1 iteration + SIGKILL inside iteration 1's update + resume (same bytes)."""
    cfg = _cfg(small_config, epochs=2, minibatches=2, warmup_steps=3, schedule="cosine", decay_steps=6)
    cfg = cfg.model_copy(update={"checkpoint": cfg.checkpoint.model_copy(update={"keep_last": 0})})  # compare every version
    cfg = _with_parity_reward(cfg, tmp_path)  # every group has variance: every iteration takes its 2 x 2 steps
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    for d in (straight, killed):
        create_or_open(d, cfg, 3)
    assert subprocess.run([sys.executable, "-c", RESUMER, str(straight)], env=env, check=False).returncode == 0
    proc = subprocess.run(
        [sys.executable, "-c", RESUMER, str(killed)], env={**env, FAULT_ENV: "update:1:before_rename"}, check=False
    )
    assert proc.returncode == -9
    assert (killed / "policy/v000001").is_dir() and not (killed / "policy/v000002").exists()
    assert subprocess.run([sys.executable, "-c", RESUMER, str(killed)], env=env, check=False).returncode == 0
    for v in (1, 2, 3):
        assert _sha(straight / f"policy/v00000{v}") == _sha(killed / f"policy/v00000{v}"), v
    state = torch.load(killed / "policy/v000003/trainer_state.pt", weights_only=True)
    assert state["global_step"] == 3 * 2 * 2 and state["next_iteration"] == 3


def test_chunked_response_logprobs_equal_full_logits(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory-saving path (LM head on response positions only, chunked, recomputed in
    backward) gives the full-logits values, entropies and gradients."""
    import rlvr.train.logprobs as lps
    from rlvr.train.grpo import token_entropy

    monkeypatch.setattr(lps, "HEAD_CHUNK_TOKENS", 5)  # force several chunks
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    prompt = chat_ids(tok, "What is 2 + 9? Put the final answer inside <answer></answer>.")
    rows = [
        TrainRow(prompt[: 10 + k], tok(f"<answer>{k}{k}</answer>", add_special_tokens=False)["input_ids"], [0.0] * 9, 1.0)
        for k in range(3)
    ]
    rows = [TrainRow(r.prompt_ids, r.response_ids, [0.0] * len(r.response_ids), 1.0) for r in rows]
    batch = collate(rows, tok.pad_token_id, torch.device("cpu"))
    fast, ent = lps.response_logprobs(model, batch, 0.7)
    (fast * batch["mask"]).sum().backward()
    g_fast = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    logits = model(input_ids=batch["ids"], attention_mask=batch["attn"]).logits[:, :-1]
    slow = policy_token_logprobs(model, batch, 0.7) * batch["mask"]
    (slow * batch["mask"]).sum().backward()
    assert torch.allclose(fast, slow, atol=1e-5)
    assert torch.allclose(ent, token_entropy(logits.detach(), 0.7) * batch["mask"], atol=1e-4)
    for a, p in zip(g_fast, model.parameters(), strict=True):
        assert torch.allclose(a, p.grad, rtol=1e-3, atol=1e-5)


def _mapped_file(ptr: int) -> str:
    """The file behind address `ptr` in this process (/proc/self/maps), or '' for anonymous memory."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        if lo <= ptr < hi:
            return fields[5] if len(fields) > 5 else ""
    return ""


@pytest.mark.skipif(not Path("/proc/self/maps").is_file(), reason="reads Linux's /proc/self/maps")
def test_own_memory_moves_weights_off_the_checkpoint_file(tiny_model: Path) -> None:
    """The first optimiser step must not write into pages mapped from model.safetensors (a page
    fault per 4 KiB page); tied weights stay tied and every value is unchanged."""
    model, _ = load_policy(tiny_model, torch.device("cpu"))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    mapped = [n for n, p in model.named_parameters() if _mapped_file(p.data_ptr()).endswith(".safetensors")]
    assert mapped, "transformers no longer maps the checkpoint: own_memory may be unneeded"
    own_memory(model)
    assert [n for n, p in model.named_parameters() if _mapped_file(p.data_ptr()).endswith(".safetensors")] == []
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    if model.config.tie_word_embeddings:
        assert model.get_output_embeddings().weight is model.get_input_embeddings().weight


@pytest.mark.parametrize("strategy", ["ddp", "fsdp2"])
def test_two_nodes_of_one_process_write_the_bytes_of_two_processes(
    scored_run: Path, small_config: Config, tmp_path: Path, strategy: str
) -> None:
    """update.nnodes: two torchrun nodes of one process each (static rendezvous at node 0's endpoint,
    as two machines run it) take the step of one machine's two processes, byte for byte; node 1
    writes nothing (global rank 0, on node 0, writes the checkpoint)."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.helpers.machines import free_port

    cfg = _cfg(small_config, micro_batch_tokens=256, minibatches=2, nproc=1, strategy=strategy)
    local = _spec(
        scored_run, _cfg(small_config, micro_batch_tokens=256, minibatches=2, nproc=2, strategy=strategy), tmp_path / "local"
    )
    stats = stages.launch_update(local, 2)
    port = free_port()
    specs = [_spec(scored_run, cfg, tmp_path / f"node{r}") for r in range(2)]
    with ThreadPoolExecutor(2) as pool:
        nodes = [pool.submit(stages.launch_update, specs[r], 1, stages.Node(r, 2, "127.0.0.1", port)) for r in range(2)]
        got = [f.result() for f in nodes]
    assert got[1] == {} and not Path(specs[1].policy_out).exists()  # node 1 holds rank 1: no stats, no files
    assert got[0]["world_size"] == stats["world_size"] == 2 and got[0]["sequences"] == stats["sequences"] > 0
    for name in ("model.safetensors", "trainer_state.pt"):
        assert (Path(local.policy_out) / name).read_bytes() == (Path(specs[0].policy_out) / name).read_bytes(), name
    timing = ("seconds", "peak_memory_mb")  # the machine's, not the step's
    drop = [{k: v for k, v in m.items() if k not in timing} for m in read_metrics(Path(local.metrics_out))]
    assert drop == [{k: v for k, v in m.items() if k not in timing} for m in read_metrics(Path(specs[0].metrics_out))]


def test_a_node_stops_when_its_gang_is_given_up(scored_run: Path, small_config: Config, tmp_path: Path) -> None:
    """A node whose peers never come (one lost before the rendezvous) stops as soon as the driver gives
    up on the gang (Node.aborted), with its torchrun and ranks, instead of waiting out torchrun's timeout."""
    import time

    from tests.helpers.machines import free_port

    spec = _spec(scored_run, _cfg(small_config, nproc=1), tmp_path / "alone")
    t0 = time.monotonic()
    node = stages.Node(0, 2, "127.0.0.1", free_port(), aborted=lambda: time.monotonic() - t0 > 3)
    with pytest.raises(stages.GangAborted, match="node 1 of 2"):
        stages.launch_update(spec, 1, node)
    assert time.monotonic() - t0 < 40
