"""Views: reading a run, never writing it.

    sql.py      `rlvr sql`: read-only DuckDB over the committed (verified) shards
    guard.py    which statements `rlvr sql` runs at all
    status.py   `rlvr status`: one row per stage, from the commit records
    report.py   `rlvr report`: one self-contained HTML page
    preview.py  `rlvr prompts`: the first prompts exactly as the model gets them

sql, guard and status load no torch (tests/test_layers.py checks it). Test: tests/test_sql_readonly.py,
test_report.py, test_cli.py.
"""
