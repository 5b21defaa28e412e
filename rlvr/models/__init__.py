"""Models: where a policy's first weights come from, and how any policy folder is loaded.

    registry.py  named pretrained models prepared offline into the model cache (`rlvr models`);
                 a table and file paths only: config validation reads it without torch
    tiny.py      the embedded default: a tiny Llama built on this machine and warmed up on the
                 answer format (never on the run's training golds)
    load.py      resolve_device and load_policy, the one loader of a transformers folder

Test: tests/integration/test_models.py.
"""
