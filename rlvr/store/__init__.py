"""The run store: a folder of Parquet shards and checkpoints, committed stage by stage (DESIGN.md).

    commit.py     the write protocol: outputs into a temporary folder, renamed, then the commit
                  record (files, sizes, sha256) written last
    records.py    the commit records and how they are read: every reader checks the files against one
    folders.py    files and folders written whole or not at all (also outside a run: eval/export --out)
    run.py        a run folder and its frozen run.toml (Run, open_run)
    locks.py      one writer and one schedule per run (flock files holding the holder's pid)
    retention.py  which policy versions keep their weights; the free-space check before an update
    integrity.py  `rlvr verify-store`: every record's files checked, a damaged stage redone; orphans
  on object storage (`--run s3://bucket/prefix`, DESIGN.md "The run store on object storage"):
    fs.py         the one filesystem layer to the bucket (fsspec/s3fs): listings, conditional writes
    workspace.py  a per-process local working copy of the run, and committed files cached by sha256
    objects.py    the commit protocol without rename: attempt-unique keys, the create-only record
    lease.py      the writer lock as a lease object (conditional writes, renewal, expiry)

Nothing here imports torch, the components or the stages: the store knows files and records,
not what is in them. Test: tests/unit/store/test_store.py, test_integrity.py, test_retention.py, test_store_s3.py
(and test_store_s3_e2e.py: the tiny model trained on a moto S3 server).
"""
