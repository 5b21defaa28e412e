-- verify(i), pass 2 of 2: GRPO group advantages over verify_rows, once every row is
-- decided (after rlvr.mathcheck; rewards were set by verify.sql and verify_fill.sql). Parameter: $eps.
-- Advantages are GRPO's group-relative ones (Shao et al. 2024, DeepSeekMath, eq. 3 outcome
-- supervision): (r - mean_g) / (std_g + eps), std the sample std over the group
-- (iteration, prompt_id), as torch.std in TRL and verl; an all-equal group gets 0.
-- Rows whose verifier failed (verifier_error) are left out of their group's baseline: group_size,
-- group_mean and group_std are over the other rows, and their own advantage is 0 (no gradient from a
-- reward nobody computed). The group stats are one hash aggregate joined back, not window functions.
WITH g AS (
    SELECT iteration, prompt_id, count(*) AS n, avg(reward) AS m, COALESCE(stddev_samp(reward), 0.0) AS sd
    FROM verify_rows
    WHERE NOT verifier_error
    GROUP BY iteration, prompt_id
)
SELECT
    s.iteration, s.prompt_id, s.sample_idx, s.task, s.extracted_answer, s.extraction, s.format_ok,
    s.correct, s.reward, s.verifier,
    s.reason,
    CAST(COALESCE(g.n, 0) AS INTEGER) AS group_size,
    COALESCE(g.m, 0.0) AS group_mean,
    COALESCE(g.sd, 0.0) AS group_std,
    CASE WHEN s.verifier_error OR g.n IS NULL THEN 0.0 ELSE (s.reward - g.m) / (g.sd + $eps) END AS advantage
FROM verify_rows AS s LEFT JOIN g ON s.iteration = g.iteration AND s.prompt_id = g.prompt_id
ORDER BY s.iteration, s.prompt_id, s.sample_idx
