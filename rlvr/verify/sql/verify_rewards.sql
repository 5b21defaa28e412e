-- verify(i), pass 2, part 1: the table macro verify_rewards(l_max, l_cache, overlong): every row of verify_rows
-- with its reward terms once every row is decided; verify_groups.sql reads it twice. A table macro, not a CTE:
-- inlined where it is read, so nothing is materialised and the group statistics read only their columns.
-- Created per pass, after verify_rows, reward_weights (one row of verify.weights per task) and plugin_rows
-- (rlvr.verify.plugins: a row one could not score becomes verifier_error) exist.
-- reward = w.correct * score + w.format * format_ok + w.citation * supported / cited (beside a correct answer
-- only) + length_penalty + the plug-ins'. Length shaping: DAPO's soft overlong punishment (Yu et al. 2025, eq.
-- 13), 0 up to l_max - l_cache tokens, then linear down to -overlong at l_max; l_cache 0 turns it off.
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
        -- a citation supports an answer: beside a wrong one it supports nothing the response says
        CASE WHEN v.citations > 0 AND COALESCE(v.correct, false) THEN w.citation * v.citations_supported / v.citations
             ELSE 0.0 END AS reward_citation,
        CASE WHEN l_cache <= 0 OR v.n_tok <= l_max - l_cache THEN 0.0
             WHEN v.n_tok <= l_max THEN CAST(overlong AS DOUBLE) * ((l_max - l_cache) - v.n_tok) / l_cache
             ELSE -CAST(overlong AS DOUBLE) END AS length_penalty
    FROM verify_rows AS v JOIN reward_weights AS w USING (task)
    LEFT JOIN plugin_rows AS pl USING (iteration, prompt_id, sample_idx)
)
