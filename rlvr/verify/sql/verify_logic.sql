-- verify(i): the logic rows pass 1 (verify.sql) could not decide: a formula answer other than the
-- gold one. rlvr.verify.logic checks it against the premises (and the variable to eliminate) in
-- the problem's meta.
SELECT v.rowid AS row_id, v.extracted_answer AS answer, p.meta
FROM verify_rows AS v
JOIN read_parquet($problems, hive_partitioning = false) AS p USING (prompt_id)
WHERE v.verifier = 'logic'
ORDER BY row_id
