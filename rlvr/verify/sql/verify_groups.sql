-- verify(i), pass 2 of 2: reward composition, length shaping and group advantages over
-- verify_rows, once every row is decided (by SQL, math-verify, the sandbox or rlvr.logic).
-- Reward composition per task (config verify.weights): reward_correct = w.correct * score,
-- reward_format = w.format * format_ok, reward_citation = w.citation * citations_supported /
-- citations (retrieval; 0 without citations), reward = their sum + length_penalty. reward_weights
-- is an Arrow table registered on the connection: one row (task, correct, format, citation) per task.
-- Reward plug-ins (config [[verify.rewards]], rlvr.verify.plugins): plugin_rows is an Arrow table with
-- one row per response when there are plug-ins (empty otherwise): their weighted sum is added to the
-- reward, their reasons to the reason, a row one of them could not score becomes verifier_error, and
-- the list of components is kept as is. $scoring names the scoring (rlvr.schema.DEFAULT_SCORING, or
-- the name given to `rlvr rescore`).
-- Parameters: $eps, $estimator ('grpo' | 'dr_grpo' | 'rloo'), $l_max (rollout.max_new_tokens),
-- $l_cache (verify.overlong_buffer; 0 = off), $overlong (verify.overlong_penalty).
-- Length shaping is DAPO's soft overlong punishment (Yu et al. 2025, eq. 13): 0 up to
-- l_max - l_cache tokens, then falling linearly to -overlong at l_max; it is its own column and
-- is added to the reward before the group statistics.
-- Advantages (references: rlvr.train.grpo.group_advantages): grpo = (r - mean_g) / (std_g + eps) with the
-- sample std (Shao et al. 2024, DeepSeekMath, eq. 3; torch.std as in TRL and verl); dr_grpo =
-- r - mean_g (Liu et al. 2025); rloo = r - mean of the others = n / (n - 1) * (r - mean_g)
-- (Ahmadian et al. 2024). An all-equal group gets 0 under each.
-- Rows whose verifier failed (verifier_error) are left out of their group's baseline: group_size,
-- group_mean and group_std are over the other rows, and their own advantage is 0 (no gradient from a
-- reward nobody computed). The group stats are one hash aggregate joined back, not window functions.
WITH c AS (
    SELECT v.* EXCLUDE (verifier_error),
        v.verifier_error OR COALESCE(pl.plugin_error, false) AS verifier_error,
        COALESCE(pl.plugin_reward, 0.0) AS plugin_reward,
        COALESCE(pl.plugin_reason, '') AS plugin_reason,
        COALESCE(pl.components, CAST([] AS STRUCT(name VARCHAR, weight DOUBLE, score DOUBLE, reward DOUBLE, reason VARCHAR)[]))
            AS components,
        w.correct * v.score AS reward_correct,
        w.format * CAST(v.format_ok AS DOUBLE) AS reward_format,
        CASE WHEN v.citations > 0 THEN w.citation * v.citations_supported / v.citations ELSE 0.0 END AS reward_citation,
        CASE WHEN $l_cache <= 0 OR v.n_tok <= $l_max - $l_cache THEN 0.0
             WHEN v.n_tok <= $l_max THEN CAST($overlong AS DOUBLE) * (($l_max - $l_cache) - v.n_tok) / $l_cache
             ELSE -CAST($overlong AS DOUBLE) END AS length_penalty
    FROM verify_rows AS v JOIN reward_weights AS w USING (task)
    LEFT JOIN plugin_rows AS pl USING (iteration, prompt_id, sample_idx)
), r AS (
    SELECT *, reward_correct + reward_format + reward_citation + length_penalty + plugin_reward AS reward,
        CASE WHEN citations IS NULL THEN reason  -- (no string copy for the rows of other tasks)
             ELSE reason || CASE
                       WHEN citations = 0 THEN '; citations: none (no <cite></cite> span)'
                       WHEN citations_supported = citations THEN '; citations: all ' || citations || ' found in the sources'
                       ELSE '; citations: ' || citations_supported || ' of ' || citations || ' supported; '
                            || citations_missing END END || plugin_reason AS full_reason
    FROM c
), g AS (
    SELECT iteration, prompt_id, count(*) AS n, avg(reward) AS m, COALESCE(stddev_samp(reward), 0.0) AS sd
    FROM r
    WHERE NOT verifier_error
    GROUP BY iteration, prompt_id
)
SELECT
    s.iteration, s.prompt_id, s.sample_idx, s.task, s.extracted_answer, s.extraction, s.format_ok,
    s.correct, s.reward, s.reward_correct, s.reward_format, s.reward_citation, s.length_penalty,
    s.citations, s.citations_supported, s.verifier, s.verifier_error,
    s.full_reason AS reason,
    CAST(COALESCE(g.n, 0) AS INTEGER) AS group_size,
    COALESCE(g.m, 0.0) AS group_mean,
    COALESCE(g.sd, 0.0) AS group_std,
    CASE WHEN s.verifier_error OR g.n IS NULL THEN 0.0
         WHEN $estimator = 'grpo' THEN (s.reward - g.m) / (g.sd + $eps)
         WHEN $estimator = 'dr_grpo' THEN s.reward - g.m
         WHEN g.n > 1 THEN (s.reward - g.m) * g.n / (g.n - 1)
         ELSE 0.0 END AS advantage,
    s.components,
    $scoring AS scoring
FROM r AS s LEFT JOIN g ON s.iteration = g.iteration AND s.prompt_id = g.prompt_id
ORDER BY s.iteration, s.prompt_id, s.sample_idx
