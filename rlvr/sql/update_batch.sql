-- update(i): the training rows of one iteration. Groups with zero reward variance carry no
-- signal under group-relative advantages (every advantage is 0) and are left out.
-- Parameters: $rollouts, $scores (lists of Parquet files).
SELECT r.prompt_id, r.sample_idx, r.prompt_token_ids, r.response_token_ids, r.response_logprobs,
       r.temperature, s.advantage, r.finish_reason
FROM read_parquet($rollouts, hive_partitioning = false) AS r
JOIN read_parquet($scores, hive_partitioning = false) AS s USING (iteration, prompt_id, sample_idx)
WHERE s.group_std > 0 AND r.num_response_tokens > 0
ORDER BY r.prompt_id, r.sample_idx
