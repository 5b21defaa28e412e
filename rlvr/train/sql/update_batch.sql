-- update(i): the training rows of one iteration. Parameters: $rollouts, $scores (lists of Parquet
-- files), $objective (update.objective).
-- grpo: groups with zero reward variance carry no signal under group-relative advantages (every
-- advantage is 0) and are left out. rft: the correct rows the verifier scored (verifier errors
-- excluded), advantage 1, whatever their group (rejection-sampling fine-tuning).
SELECT r.prompt_id, r.sample_idx, r.prompt_token_ids, r.response_token_ids, r.response_logprobs,
       r.temperature, CASE WHEN $objective = 'rft' THEN 1.0 ELSE s.advantage END AS advantage, r.finish_reason
FROM read_parquet($rollouts, hive_partitioning = false) AS r
JOIN read_parquet($scores, hive_partitioning = false) AS s USING (iteration, prompt_id, sample_idx)
WHERE r.num_response_tokens > 0
  AND CASE WHEN $objective = 'rft' THEN s.correct AND NOT s.verifier_error ELSE s.group_std > 0 END
ORDER BY r.prompt_id, r.sample_idx
