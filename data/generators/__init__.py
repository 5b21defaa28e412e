"""Builders of the shipped sets that are files (data/logic.jsonl, data/retrieval.jsonl).

    python -m rlvr.data.generators.logic       # needs reasoning-gym==0.1.25 (the `data` extra)
    python -m rlvr.data.generators.retrieval

Each rewrites its file byte for byte (tests/unit/verify/test_logic.py, tests/unit/data/test_retrieval_data.py check it).
The loaders (rlvr.data.logic, rlvr.data.retrieval) only read the files; a run never imports these.
"""
