-- verify(i): score every rollout row against its problem's ground truth, in one pass.
-- Parameters: $rollouts, $problems (lists of Parquet files), $correct_reward, $format_reward,
-- $tol (relative numeric tolerance), $eps (advantage denominator epsilon).
-- Extraction order: <answer>...</answer> (format_ok), then \boxed{...}, then the last number.
-- Advantages are GRPO's group-relative ones (Shao et al. 2024, DeepSeekMath, eq. 3 outcome
-- supervision): (r - mean_g) / (std_g + eps), std the sample std over the group
-- (iteration, prompt_id), as torch.std in TRL and verl; an all-equal group gets 0.
WITH r AS (
    SELECT iteration, prompt_id, sample_idx, response_text
    FROM read_parquet($rollouts, hive_partitioning = false)
), p AS (
    SELECT prompt_id, task, answer
    FROM read_parquet($problems, hive_partitioning = false)
), x AS (
    SELECT r.*, p.task, p.answer,
        regexp_matches(response_text, '(?s)<answer>.*?</answer>') AS has_tag,
        regexp_extract(response_text, '(?s)<answer>(.*?)</answer>', 1) AS tag_raw,
        regexp_extract(response_text, '\\boxed\{([^{}]*)\}', 1) AS boxed_raw,
        regexp_extract_all(response_text, '-?[0-9][0-9,]*(?:\.[0-9]+)?')[-1] AS last_num
    FROM r JOIN p USING (prompt_id)
), e AS (
    SELECT *,
        CASE WHEN has_tag THEN 'answer_tag' WHEN boxed_raw <> '' THEN 'boxed'
             WHEN last_num IS NOT NULL THEN 'last_number' ELSE 'none' END AS extraction,
        CASE WHEN has_tag THEN tag_raw WHEN boxed_raw <> '' THEN boxed_raw ELSE last_num END AS extracted
    FROM x
), c AS (
    SELECT *,
        norm_answer(extracted) AS pred,
        norm_answer(answer) AS gold,
        TRY_CAST(norm_answer(extracted) AS DOUBLE) AS pred_num,
        TRY_CAST(norm_answer(answer) AS DOUBLE) AS gold_num
    FROM e
), s AS (
    SELECT *,
        CASE WHEN gold_num IS NOT NULL THEN 'sql_numeric' ELSE 'sql_exact' END AS verifier,
        COALESCE(
            CASE WHEN gold_num IS NOT NULL
                 THEN pred_num IS NOT NULL AND abs(pred_num - gold_num) <= $tol * greatest(1.0, abs(gold_num))
                 ELSE pred = gold END,
            false) AS correct
    FROM c
), rw AS (
    SELECT *,
        CAST(CASE WHEN correct THEN $correct_reward ELSE 0 END AS DOUBLE)
          + CAST(CASE WHEN has_tag THEN $format_reward ELSE 0 END AS DOUBLE) AS reward
    FROM s
)
SELECT
    iteration, prompt_id, sample_idx, task,
    extracted AS extracted_answer,
    extraction,
    has_tag AS format_ok,
    correct,
    reward,
    verifier,
    CASE
        WHEN extraction = 'none' THEN 'no_answer: no <answer> tag, \boxed{} or number in the response'
        WHEN correct THEN 'correct: ' || pred || ' = ' || gold
        WHEN pred = '' THEN 'wrong: empty answer, expected ' || gold
        ELSE 'wrong: got ' || pred || ', expected ' || gold
    END || CASE WHEN extraction IN ('boxed', 'last_number')
                THEN ' (no <answer> tag; taken from ' || extraction || ')' ELSE '' END AS reason,
    CAST(count(*) OVER g AS INTEGER) AS group_size,
    avg(reward) OVER g AS group_mean,
    COALESCE(stddev_samp(reward) OVER g, 0.0) AS group_std,
    (reward - avg(reward) OVER g) / (COALESCE(stddev_samp(reward) OVER g, 0.0) + $eps) AS advantage
FROM rw
WINDOW g AS (PARTITION BY iteration, prompt_id)
ORDER BY iteration, prompt_id, sample_idx
