-- verify(i), pass 2, part 2: group advantages over verify_rewards, in rlvr.schema.SCORES' columns, ordered by
-- (iteration, prompt_id, sample_idx); the plug-ins' reasons added to the reason. Parameters: $scoring (its
-- name), $eps, $estimator, $l_max, $l_cache, $overlong (verify_rewards.sql).
-- Advantages (rlvr.train.grpo.group_advantages): grpo = (r - mean_g) / (std_g + eps), sample std (Shao et al.
-- 2024, eq. 3); dr_grpo = r - mean_g (Liu et al. 2025); rloo = n / (n - 1) * (r - mean_g) (Ahmadian et al.
-- 2024). A row whose verifier failed is left out of its group's statistics and gets advantage 0 (no gradient
-- from a reward nobody computed). The statistics are one hash aggregate joined back, not window functions.
WITH g AS (
    SELECT iteration, prompt_id, count(*) AS n, avg(reward) AS m, COALESCE(stddev_samp(reward), 0.0) AS sd
    FROM verify_rewards($l_max, $l_cache, $overlong)
    WHERE NOT verifier_error
    GROUP BY iteration, prompt_id
)
SELECT * EXCLUDE (plugin_components),
    COALESCE(plugin_components, CAST([] AS STRUCT(name VARCHAR, weight DOUBLE, score DOUBLE, reward DOUBLE, reason VARCHAR)[]))
        AS components,
    $scoring AS scoring
FROM (
    SELECT
        s.iteration, s.prompt_id, s.sample_idx, s.task, s.extracted_answer, s.extraction, s.format_ok,
        s.correct, s.reward, s.reward_correct, s.reward_format, s.reward_citation, s.length_penalty,
        s.citations, s.citations_supported, s.verifier, s.verifier_error,
        CASE WHEN s.citations IS NULL THEN s.reason  -- (no string copy for the rows of other tasks)
             ELSE s.reason || CASE
                       WHEN s.citations = 0 THEN '; citations: none (no <cite></cite> span)'
                       WHEN s.citations_supported = s.citations THEN '; citations: all ' || s.citations || ' found in the sources'
                       ELSE '; citations: ' || s.citations_supported || ' of ' || s.citations || ' supported; '
                            || s.citations_missing END END || s.plugin_reason AS reason,
        CAST(COALESCE(g.n, 0) AS INTEGER) AS group_size,
        COALESCE(g.m, 0.0) AS group_mean,
        COALESCE(g.sd, 0.0) AS group_std,
        CASE WHEN s.verifier_error OR g.n IS NULL THEN 0.0
             WHEN $estimator = 'grpo' THEN (s.reward - g.m) / (g.sd + $eps)
             WHEN $estimator = 'dr_grpo' THEN s.reward - g.m
             WHEN g.n > 1 THEN (s.reward - g.m) * g.n / (g.n - 1)
             ELSE 0.0 END AS advantage,
        s.plugin_components
    FROM verify_rewards($l_max, $l_cache, $overlong) AS s
    LEFT JOIN g ON s.iteration = g.iteration AND s.prompt_id = g.prompt_id
    ORDER BY s.iteration, s.prompt_id, s.sample_idx  -- a projection on top keeps this order
)
