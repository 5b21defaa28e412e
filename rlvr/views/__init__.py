"""Views: reading a run, never writing it.

    sql.py          `rlvr sql`: read-only DuckDB over the committed (verified) shards, or an eval folder
    guard.py        which statements `rlvr sql` runs at all
    status.py       `rlvr status`: one row per stage, from the commit records
    report.py       `rlvr report`: one self-contained HTML page
    preview.py      `rlvr prompts`: the first prompts exactly as the model gets them
    eval_folder.py  `rlvr eval`: a version or any model folder evaluated into a folder of Parquet files
    export.py       `rlvr export`: a version as a clean HF folder with a model card
    track.py        [tracking] and `rlvr track`: the report's figures per iteration sent to a tracker
    trackers/       one module per tracker: tensorboard, mlflow, wandb (offline)

sql, guard and status load no torch (tests/unit/project/test_layers.py checks it). Test: tests/unit/views/test_sql_readonly.py,
test_report.py, test_cli.py, test_eval_export.py, test_tracking.py.
"""
