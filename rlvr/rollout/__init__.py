"""Rollout: prompt token ids in, G sampled responses (token ids, logprobs, finish reason) out.

    engines.py      the engine interface, the transformers engine and the vLLM engine (a
                    subprocess in vLLM's own interpreter), kept warm between iterations
    sampler.py      the transformers sampler: top-p, seeded per sample (rlvr.seeds.derive_seed)
    vllm_worker.py  the vLLM side of the process boundary; imports no rlvr module

A component: it neither renders prompts (the stages hand it ids) nor writes the store.
Test: tests/integration/test_rollout.py, test_vllm.py.
"""
