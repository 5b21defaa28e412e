-- update(i): group counts and mean reward of one iteration's scores. Parameter: $scores.
SELECT
    CAST(count(DISTINCT prompt_id) FILTER (WHERE group_std > 0) AS INTEGER) AS groups_used,
    CAST(count(DISTINCT prompt_id) FILTER (WHERE group_std = 0) AS INTEGER) AS groups_dropped,
    avg(reward) AS reward_mean
FROM read_parquet($scores, hive_partitioning = false)
