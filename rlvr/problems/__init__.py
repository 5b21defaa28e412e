"""Problems and prompts: what the model is asked.

    readers.py   a user's files (JSONL, JSON, CSV, Parquet, HF save_to_disk) as Records naming file and row
    datasets.py  the configured datasets (shipped tasks and the user's files) as PROBLEMS rows:
                 column mapping, gold extraction, splits, the unmatchable-gold check
    prompts.py   the ONE prompt path: prompt_ids(tok, row, prompt) renders a problem row with the
                 [prompt] system turn, template and few-shot examples into the exact token ids

Every consumer (rollout, evaluate, `rlvr import`, the tiny warm-up, `rlvr prompts`, the benchmarks)
renders through prompts.prompt_ids. The shipped tasks are read by rlvr.data (data/).
Test: tests/unit/data/test_datasets.py, test_prompt_path.py.
"""
