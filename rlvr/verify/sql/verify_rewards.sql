-- verify(i), pass 2 of 2, part 1: the table macro verify_rewards(l_max, l_cache, overlong), every row of
-- verify_rows with its reward terms, once every row is decided (by SQL, math-verify, the sandbox or
-- rlvr.logic); verify_groups.sql reads it twice (group statistics, then the rows). A table macro, not a
-- CTE: it is inlined where it is read, so the group statistics read only the few columns they need and
-- nothing is materialised (a CTE read twice was: bench/README.md). Created per pass, after verify_rows
-- and the registered tables below exist (a table macro binds its tables when it is created).
-- Reward composition per task (config verify.weights): reward_correct = w.correct * score,
-- reward_format = w.format * format_ok, reward_citation = w.citation * citations_supported /
-- citations (retrieval; 0 without citations, and 0 beside a wrong answer), reward = their sum +
-- length_penalty + the plug-ins'.
-- reward_weights is an Arrow table registered on the connection: one row (task, correct, format,
-- citation) per task. plugin_rows (rlvr.verify.plugins, config [[verify.rewards]]) has one row per
-- response when there are plug-ins (empty otherwise): their weighted sum is added to the reward, a row
-- one of them could not score becomes verifier_error.
-- Length shaping is DAPO's soft overlong punishment (Yu et al. 2025, eq. 13): 0 up to
-- l_max - l_cache tokens (rollout.max_new_tokens, verify.overlong_buffer; l_cache 0 = off), then falling
-- linearly to -overlong (verify.overlong_penalty) at l_max; it is its own column and is added to the
-- reward before the group statistics.
CREATE OR REPLACE TEMP MACRO verify_rewards(l_max, l_cache, overlong) AS TABLE
SELECT *, reward_correct + reward_format + reward_citation + length_penalty + plugin_reward AS reward
FROM (
    SELECT v.* EXCLUDE (verifier_error),
        v.verifier_error OR COALESCE(pl.plugin_error, false) AS verifier_error,
        COALESCE(pl.plugin_reward, 0.0) AS plugin_reward,
        COALESCE(pl.plugin_reason, '') AS plugin_reason,
        pl.components AS plugin_components,
        w.correct * v.score AS reward_correct,
        w.format * CAST(v.format_ok AS DOUBLE) AS reward_format,
        -- a citation supports an answer: with a wrong one it supports nothing the response says, and a
        -- wrong answer earns 0 (else the right quote beside a wrong answer would earn the citation weight)
        CASE WHEN v.citations > 0 AND COALESCE(v.correct, false) THEN w.citation * v.citations_supported / v.citations
             ELSE 0.0 END AS reward_citation,
        CASE WHEN l_cache <= 0 OR v.n_tok <= l_max - l_cache THEN 0.0
             WHEN v.n_tok <= l_max THEN CAST(overlong AS DOUBLE) * ((l_max - l_cache) - v.n_tok) / l_cache
             ELSE -CAST(overlong AS DOUBLE) END AS length_penalty
    FROM verify_rows AS v JOIN reward_weights AS w USING (task)
    LEFT JOIN plugin_rows AS pl USING (iteration, prompt_id, sample_idx)
)
