"""The update step on the real tiny model: the policy gradient moves logprobs the right way."""

from __future__ import annotations

from pathlib import Path

import torch

from rlvr.config import UpdateSection
from rlvr.rollout import render_prompt_ids
from rlvr.update import TrainRow, grpo_steps, load_policy, make_optimizer, policy_logprobs, collate


def _seq_logprob(model, row: TrainRow, pad: int) -> float:
    batch = collate([row], pad, torch.device("cpu"))
    with torch.no_grad():
        lp = policy_logprobs(model, batch, 1.0)
    return float((lp * batch["mask"]).sum())


def test_one_update_raises_positive_and_lowers_negative(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    model.eval()
    prompt = render_prompt_ids(tok, "What is 3 + 4? Put the final answer inside <answer></answer>.")
    good = tok("<answer>7</answer>", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    bad = tok("<answer>8</answer>", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    rows = []
    for resp, adv in ((good, 1.0), (bad, -1.0)):
        r = TrainRow(prompt, resp, [0.0] * len(resp), adv)
        with torch.no_grad():  # old logprobs = current policy's, as right after rollout
            batch = collate([r], tok.pad_token_id, torch.device("cpu"))
            old = policy_logprobs(model, batch, 1.0)[batch["mask"].bool()].tolist()
        rows.append(TrainRow(prompt, resp, old, adv))
    before = [_seq_logprob(model, r, tok.pad_token_id) for r in rows]
    cfg = UpdateSection(lr=1e-3, minibatches=1)
    opt = make_optimizer(model, cfg, None)
    metrics = grpo_steps(model, opt, rows, cfg=cfg, temperature=1.0, pad_id=tok.pad_token_id)
    after = [_seq_logprob(model, r, tok.pad_token_id) for r in rows]
    assert after[0] > before[0] and after[1] < before[1]
    (m,) = metrics
    assert m["ratio_mean"] == 1.0 or abs(m["ratio_mean"] - 1.0) < 1e-5  # on-policy first step
    assert m["tokens"] == len(good) + len(bad) and m["sequences"] == 2 and m["grad_norm"] > 0


def test_micro_batches_accumulate_to_the_same_gradient(tiny_model: Path) -> None:
    model, tok = load_policy(tiny_model, torch.device("cpu"))
    prompt = render_prompt_ids(tok, "What is 1 + 1? Put the final answer inside <answer></answer>.")
    rows = [TrainRow(prompt, tok(f"<answer>{k}</answer>", add_special_tokens=False)["input_ids"][: 3 + k % 3],
                     [-1.0] * (3 + k % 3), float(k - 2)) for k in range(5)]  # fmt: skip
    grads = []
    for mbs in (5, 2):
        m, _ = load_policy(tiny_model, torch.device("cpu"))
        opt = torch.optim.SGD(m.parameters(), lr=0.0)
        grpo_steps(m, opt, rows, cfg=UpdateSection(micro_batch_size=mbs, minibatches=1, max_grad_norm=1e9),
                   temperature=1.0, pad_id=tok.pad_token_id)  # fmt: skip
        grads.append(torch.cat([p.grad.flatten() for p in m.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-6)
