-- verify(i): the logic rows pass 1 could not decide (a formula other than the gold one), for rlvr.verify.logic,
-- which checks it against the premises in the problem's meta.
SELECT v.rowid AS row_id, v.extracted_answer AS answer, p.meta
FROM verify_rows AS v
JOIN read_parquet($problems, hive_partitioning = false) AS p USING (prompt_id)
WHERE v.verifier = 'logic'
ORDER BY row_id
