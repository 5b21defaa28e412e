"""Training: the GRPO update from policy v_i and iteration i's scored rollouts to v_{i+1}.

    grpo.py         the maths as small pure functions (advantages, clipped ratios, KL, losses)
    batch.py        training rows from the scored shards; token-budget micro-batches, padded or packed
    logprobs.py     response-token logprobs through the LM head in chunks; the one no-grad pass over rows
    distributed.py  ranks under torchrun: who runs which micro-batch, DDP all_reduce, FSDP2 sharding
    optim.py        AdamW, the LR schedule, the model's memory options; checkpoints (HF folder +
                    trainer_state.pt)
    loop.py         the step loop: epochs, mini-batches, gradient accumulation, one metrics dict a step
    update.py       one iteration's update v_i -> v_{i+1} (UpdateSpec, run_update): what the stage calls
    worker.py       one rank of a multi-process update under torchrun
    sql/            the SQL that selects a stage's training rows from the scored shards

A component: it reads the shards the stage names and writes a checkpoint folder; the stage
commits it. Each module imports only those listed above it (sql/ is batch.py's). Test:
tests/unit/train/test_grpo.py, test_update*.py.
"""
