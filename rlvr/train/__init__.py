"""Training: the GRPO update from policy v_i and iteration i's scored rollouts to v_{i+1}.

    grpo.py    the maths as small pure functions (advantages, clipped ratios, KL, losses)
    update.py  batching, logprobs through the LM head in chunks, DDP/FSDP2, the optimiser and
               the step loop, checkpoints in the transformers format
    worker.py  one rank of a multi-process update under torchrun
    sql/       the SQL that selects a stage's training rows from the scored shards

A component: it reads the shards the stage names and writes a checkpoint folder; the stage
commits it. Test: tests/test_grpo.py, test_update*.py.
"""
