-- verify(i), pass 2 of 2: length shaping and group advantages over verify_rows, once every row
-- is decided (after rlvr.mathcheck; rewards were set by verify.sql and verify_fill.sql).
-- Parameters: $eps, $estimator ('grpo' | 'dr_grpo' | 'rloo'), $l_max (rollout.max_new_tokens),
-- $l_cache (verify.overlong_buffer; 0 = off), $overlong (verify.overlong_penalty).
-- Length shaping is DAPO's soft overlong punishment (Yu et al. 2025, eq. 13): 0 up to
-- l_max - l_cache tokens, then falling linearly to -overlong at l_max; it is its own column and
-- is added to the reward before the group statistics.
-- Advantages (references: rlvr.grpo.group_advantages): grpo = (r - mean_g) / (std_g + eps) with the
-- sample std (Shao et al. 2024, DeepSeekMath, eq. 3; torch.std as in TRL and verl); dr_grpo =
-- r - mean_g (Liu et al. 2025); rloo = r - mean of the others = n / (n - 1) * (r - mean_g)
-- (Ahmadian et al. 2024). An all-equal group gets 0 under each.
-- Rows whose verifier failed (verifier_error) are left out of their group's baseline: group_size,
-- group_mean and group_std are over the other rows, and their own advantage is 0 (no gradient from a
-- reward nobody computed). The group stats are one hash aggregate joined back, not window functions.
WITH r AS (
    SELECT * REPLACE (reward + length_penalty AS reward)
    FROM (
        SELECT *,
            CASE WHEN $l_cache <= 0 OR n_tok <= $l_max - $l_cache THEN 0.0
                 WHEN n_tok <= $l_max THEN CAST($overlong AS DOUBLE) * (($l_max - $l_cache) - n_tok) / $l_cache
                 ELSE -CAST($overlong AS DOUBLE) END AS length_penalty
        FROM verify_rows
    )
), g AS (
    SELECT iteration, prompt_id, count(*) AS n, avg(reward) AS m, COALESCE(stddev_samp(reward), 0.0) AS sd
    FROM r
    WHERE NOT verifier_error
    GROUP BY iteration, prompt_id
)
SELECT
    s.iteration, s.prompt_id, s.sample_idx, s.task, s.extracted_answer, s.extraction, s.format_ok,
    s.correct, s.reward, s.length_penalty, s.verifier, s.verifier_error,
    s.reason,
    CAST(COALESCE(g.n, 0) AS INTEGER) AS group_size,
    COALESCE(g.m, 0.0) AS group_mean,
    COALESCE(g.sd, 0.0) AS group_std,
    CASE WHEN s.verifier_error OR g.n IS NULL THEN 0.0
         WHEN $estimator = 'grpo' THEN (s.reward - g.m) / (g.sd + $eps)
         WHEN $estimator = 'dr_grpo' THEN s.reward - g.m
         WHEN g.n > 1 THEN (s.reward - g.m) * g.n / (g.n - 1)
         ELSE 0.0 END AS advantage
FROM r AS s LEFT JOIN g ON s.iteration = g.iteration AND s.prompt_id = g.prompt_id
ORDER BY s.iteration, s.prompt_id, s.sample_idx
