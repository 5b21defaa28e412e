-- update(i): group counts and mean reward of one iteration's scores, and how stale its rollouts are
-- (iteration - policy_version: rollout.max_staleness). Parameters: $scores, $rollouts, $objective.
-- A group is used when update_batch.sql takes rows of it: grpo, reward variance; rft, a correct row.
WITH g AS (
    SELECT prompt_id, max(group_std) > 0 AS signal, bool_or(correct AND NOT verifier_error) AS has_correct
    FROM read_parquet($scores, hive_partitioning = false)
    GROUP BY prompt_id
)
SELECT
    CAST(count(*) FILTER (WHERE CASE WHEN $objective = 'rft' THEN has_correct ELSE signal END) AS INTEGER) AS groups_used,
    CAST(count(*) FILTER (WHERE NOT CASE WHEN $objective = 'rft' THEN has_correct ELSE signal END) AS INTEGER) AS groups_dropped,
    (SELECT avg(reward) FROM read_parquet($scores, hive_partitioning = false)) AS reward_mean,
    (SELECT CAST(max(iteration - policy_version) AS INTEGER) FROM read_parquet($rollouts, hive_partitioning = false)) AS staleness
FROM g
