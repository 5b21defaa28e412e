-- verify(i): the code rows pass 1 left to the sandbox tier: row_id (verify_rows' rowid), the response, the
-- problem's tests and its entry point where the dataset names one (meta.entry_point). Parameters: $rollouts, $problems.
SELECT v.rowid AS row_id, prompt_id, r.response_text, p.tests,
    CASE WHEN json_valid(p.meta) THEN json_extract_string(p.meta, '$.entry_point') END AS entry_point
FROM verify_rows AS v
JOIN read_parquet($rollouts, hive_partitioning = false) AS r USING (iteration, prompt_id, sample_idx)
JOIN read_parquet($problems, hive_partitioning = false) AS p USING (prompt_id)
WHERE v.verifier = 'code'
ORDER BY row_id
