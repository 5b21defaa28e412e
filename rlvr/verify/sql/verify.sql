-- verify(i), pass 1 of 2: extract, normalise and decide every rollout row SQL can decide, into the
-- connection's temp table verify_rows (run by rlvr.verify.scoring; macros from macros.sql).
-- Parameters: $rollouts, $problems (lists of Parquet files), $tol (relative numeric tolerance, for
-- golds that are not integers only), $format_mode ('answer': format_ok = an <answer> tag;
-- 'think_answer': macros.sql think_answer_ok), $multiple ('reject': a response with several <answer>
-- tags, or several \boxed{} and no tag, is wrong (a hedge); 'last': the last one counts).
-- Rewards are not set here: verify_groups.sql weighs the components (score, format_ok, citations).
--
-- Extraction order: <answer>...</answer> (format_ok; the only opening tag and the nearest closing
-- one, or the last under $multiple = 'last'), then the only (or last) \boxed{...} (braces nested up
-- to two levels, e.g. \boxed{\frac{1}{2}}), then the last number in the text (thousands commas, a
-- fraction a/b and a trailing % included) unless the text opens an <answer> tag it never closes.
-- Decision (verifier):
--   sql_numeric  gold is a plain number (macros.sql num_value): the prediction is compared by value,
--                exactly (dec_canon text for decimals of any length, num_rat fractions otherwise;
--                never as DOUBLE), and within |pred - gold| <= tol * max(1, |gold|) only when tol > 0
--                and the gold is not an integer. NaN and infinities are never correct. A % on one side only is read both ways,
--                '50%' = '50' (the unit dropped, GSM8K style) and '50%' = '0.5' (x/100), so neither
--                convention is scored wrong; with % on both sides the numbers must match.
--                A non-numeric, non-symbolic prediction ('nineteen', '1.2.3') is wrong here.
--   sql_exact    task 'exact' (a dataset's verifier = 'exact'), or gold is neither a number nor symbolic:
--                the normalised strings must be equal; or gold is
--                symbolic and the normalised strings are identical (identical text: equivalent).
--   undecided    gold or prediction is symbolic (looks_symbolic) and SQL cannot compare them:
--                rlvr.verify.math fills these rows (verifier math_verify), then verify_groups.sql runs.
--   code         task 'code': run in the sandbox (rlvr.verify.code via verify_code.sql).
--   logic        task 'logic' with a formula answer that is not the gold one, spelled alike
--                (norm_formula): rlvr.logic checks that it follows from the premises (verify_logic.sql).
--                Verdict answers (gold true/false/unknown, norm_verdict) are sql_exact.
-- Speed (bench/verify.py; EXPLAIN ANALYZE): gold answers are normalised once per problem, not once
-- per response; each regex runs only on the rows that need it (CASE branches are evaluated on their
-- own rows only): the boxed one on untagged texts that contain '\boxed{', the last-number one on
-- the rest; plain decimals skip normalisation. RE2 is several times faster when asked for the whole
-- match (group 0, its DFA) than for a capture group, so captures run only on short strings.
CREATE OR REPLACE TEMP TABLE verify_rows AS
WITH golds AS (  -- each problem's gold, normalised once
    SELECT * EXCLUDE (gold_rat), gold_rat.n AS gold_n, gold_rat.d AS gold_d,  -- scalars: cheaper through the join
        COALESCE(NOT contains(gold_dec, '.'), gold_rat.n % gold_rat.d = 0, false) AS gold_int
    FROM (
    SELECT prompt_id, task, answer, gold, gold_sym, gold_body, dec_canon(gold_body) AS gold_dec, num_rat(gold_body) AS gold_rat,
        CASE WHEN isfinite(gold_num) THEN gold_num END AS gold_num, ends_with(gold, '%') AS gold_pct,
        CASE WHEN task = 'logic' THEN norm_verdict(gold) END AS gold_verdict,
        CASE WHEN task = 'logic' THEN norm_formula(answer) END AS gold_formula
    FROM (
        SELECT prompt_id, task, answer, gold, gold_body, looks_symbolic(gold) AS gold_sym, num_value(gold_body) AS gold_num
        FROM (
            SELECT *, num_body(gold) AS gold_body
            FROM (
                SELECT prompt_id, task, answer, norm_answer(answer) AS gold
                FROM read_parquet($problems, hive_partitioning = false)
            )
        )
    )
    )
), tag_segments AS (
    -- seg: the text after the first '<answer>' up to the next one. When seg holds a '</answer>', the
    -- body is seg up to it: exactly what the lazy regex '(?s)<answer>(.*?)</answer>' extracts, for a
    -- third of its cost (measured: bench/README.md). Only a second '<answer>' before the first
    -- '</answer>' falls back to the regex itself.
    -- n_tags: 0, 1 or 2 (two or more): with a second tag, seg1 ends before the end of the text
    SELECT *, CASE WHEN n_tags > 1 AND $multiple = 'last' THEN string_split(t, '<answer>')[-1] ELSE seg1 END AS seg
    FROM (
        SELECT *, CASE WHEN seg1 IS NULL THEN 0 WHEN strpos(t, '<answer>') + 7 + length(seg1) < length(t) THEN 2 ELSE 1 END AS n_tags
        FROM (
            SELECT iteration, prompt_id, sample_idx, num_response_tokens AS n_tok, response_text AS t,
                CASE WHEN contains(response_text, '<answer>') THEN split_part(response_text, '<answer>', 2) END AS seg1
            FROM read_parquet($rollouts, hive_partitioning = false)
        )
    )
), tag_bodies AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, t, n_tags,
        CASE WHEN seg IS NULL THEN NULL
             WHEN contains(seg, '</answer>') THEN split_part(seg, '</answer>', 1)
             WHEN n_tags > 1 AND $multiple = 'last' THEN NULL  -- the last opening tag is never closed
             WHEN regexp_matches(t, '(?s)<answer>.*?</answer>')
                 THEN regexp_extract(t, '(?s)<answer>(.*?)</answer>', 1) END AS tag_body
    FROM tag_segments
), hedges AS (
    SELECT *, CASE WHEN n_tags > 1 AND has_tag THEN 'several <answer> tags'
                   WHEN n_boxed > 1 THEN 'several \boxed{} answers' END AS hedge
    FROM (
        SELECT iteration, prompt_id, sample_idx, n_tok, t, tag_body IS NOT NULL AS has_tag, tag_body, n_tags,
            CASE WHEN $format_mode = 'think_answer' THEN think_answer_ok(t)
                 ELSE tag_body IS NOT NULL AND (n_tags = 1 OR $multiple = 'last') END AS format_ok,
            CASE WHEN tag_body IS NULL AND contains(t, '\boxed{')
                 THEN (length(t) - length(replace(t, '\boxed{', ''))) // 7 ELSE 0 END AS n_boxed,
            CASE WHEN n_boxed = 1 OR n_boxed > 1 AND $multiple = 'reject'
                 THEN regexp_extract(t, '\\boxed\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}', 1)
                 WHEN n_boxed > 1
                 THEN regexp_extract_all(t, '\\boxed\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}', 1)[-1]
                 ELSE '' END AS boxed
        FROM tag_bodies
    )
), last_numbers AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, has_tag, format_ok, tag_body, boxed, hedge,
        -- the last number and the non-digits after it (group 0, see above), then the number alone
        CASE WHEN NOT has_tag AND boxed = '' AND n_tags = 0  -- an unclosed <answer> is no answer, not a licence to guess
             THEN nullif(regexp_extract(
                      regexp_extract(t, '[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?%?\D*$', 0),
                      '^[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?%?', 0), '') END AS last_num
    FROM hedges
), extractions AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, has_tag, format_ok, CASE WHEN $multiple = 'reject' THEN hedge END AS hedge,
        CASE WHEN has_tag THEN 'answer_tag' WHEN boxed <> '' THEN 'boxed'
             WHEN last_num IS NOT NULL THEN 'last_number' ELSE 'none' END AS extraction,
        CASE WHEN has_tag THEN tag_body WHEN boxed <> '' THEN boxed ELSE last_num END AS extracted
    FROM last_numbers
), plain_flags AS (
    -- fast path: most answers are already a plain decimal ('42', '-3.5'); only the others are normalised
    SELECT extractions.*, regexp_full_match(extracted, '-?\d+(?:\.\d+)?') AS plain
    FROM extractions
), normalised AS (
    SELECT plain_flags.*, CASE WHEN plain THEN extracted ELSE norm_answer(extracted) END AS pred
    FROM plain_flags
), bodies AS (
    SELECT normalised.*, NOT plain AND ends_with(pred, '%') AS pred_pct,
        CASE WHEN NOT plain THEN num_body(pred) END AS pred_body
    FROM normalised
), decimals AS (
    -- pred_dec (dec_canon, in steps so that no part is computed twice): most answers are integers
    -- already in canonical form; other decimals are split once into integer and fraction digits
    SELECT * EXCLUDE (dec_s, dec_ip, dec_fp),
        CASE WHEN dec_ip IS NULL THEN dec_s ELSE dec_parts(starts_with(dec_s, '-'), dec_ip, dec_fp) END AS pred_dec
    FROM (
        SELECT *, CASE WHEN need THEN split_part(ltrim(dec_s, '-'), '.', 1) END AS dec_ip,
            CASE WHEN need THEN split_part(dec_s, '.', 2) END AS dec_fp
        FROM (
            SELECT *, dec_s IS NOT NULL AND (contains(dec_s, '.') OR starts_with(dec_s, '0') OR starts_with(dec_s, '-0')) AS need
            FROM (
                SELECT bodies.*, CASE WHEN plain THEN TRY_CAST(pred AS DOUBLE) ELSE num_value(pred_body) END AS pred_num0,
                    CASE WHEN plain THEN pred
                         WHEN regexp_full_match(pred_body, '-?(?:\d+\.?\d*|\.\d+)') THEN pred_body END AS dec_s
                FROM bodies
            )
        )
    )
), joined AS (
    SELECT h.iteration, h.prompt_id, h.sample_idx, h.n_tok, h.has_tag, h.format_ok, h.extraction, h.extracted, h.pred,
        h.pred_pct, CASE WHEN isfinite(h.pred_num0) THEN h.pred_num0 END AS pred_num, h.pred_dec, h.hedge,
        CASE WHEN h.plain THEN h.pred ELSE h.pred_body END AS pred_b,
        p.task, p.answer, p.gold, p.gold_num, p.gold_pct, p.gold_sym, p.gold_verdict, p.gold_formula,
        p.gold_n, p.gold_d, p.gold_dec, p.gold_int,
        CASE WHEN p.gold_verdict IS NOT NULL THEN norm_verdict(h.pred) END AS pred_verdict,
        CASE WHEN p.task = 'logic' AND p.gold_verdict IS NULL THEN norm_formula(h.extracted) END AS pred_formula
    FROM decimals AS h JOIN golds AS p USING (prompt_id)
), routed AS (
    SELECT *,
        CASE
            WHEN task = 'code' THEN 'code'  -- decided by running it: rlvr.verify.code, via verify_code.sql
            WHEN hedge IS NOT NULL THEN 'sql_exact'  -- several answers: wrong ($multiple = 'reject')
            WHEN gold_verdict IS NOT NULL THEN 'sql_exact'  -- logic verdicts
            WHEN task = 'exact' THEN 'sql_exact'  -- datasets with verifier = 'exact': strings only, never read as numbers
            WHEN task = 'logic' THEN CASE WHEN COALESCE(pred_formula, '') IN ('', gold_formula) THEN 'sql_exact' ELSE 'logic' END
            WHEN gold_num IS NOT NULL AND pred_num IS NOT NULL THEN 'sql_numeric'
            WHEN COALESCE(pred, '') = '' THEN CASE WHEN gold_num IS NOT NULL THEN 'sql_numeric' ELSE 'sql_exact' END
            WHEN gold_num IS NOT NULL AND NOT looks_symbolic(pred) THEN 'sql_numeric'  -- wrong: not a number
            WHEN gold_num IS NULL AND NOT gold_sym THEN 'sql_exact'
            WHEN pred = gold THEN 'sql_exact'
            ELSE 'undecided'
        END AS verifier
    FROM joined
), decided AS (
    SELECT *,
        CASE verifier
            WHEN 'undecided' THEN NULL
            WHEN 'code' THEN NULL
            WHEN 'logic' THEN NULL
            WHEN 'sql_numeric' THEN CASE  -- each branch runs on its own rows only
                WHEN pred_dec = gold_dec THEN true  -- exact, any length (the bare numbers: '50%' = '50')
                WHEN $tol > 0 AND NOT gold_int AND COALESCE(
                    num_close(pred_num, gold_num, $tol)
                    OR (pred_pct <> gold_pct
                        AND num_close(CASE WHEN pred_pct THEN pred_num / 100 ELSE pred_num END,
                                      CASE WHEN gold_pct THEN gold_num / 100 ELSE gold_num END, $tol)), false) THEN true
                WHEN pred_dec IS NOT NULL AND gold_dec IS NOT NULL AND pred_pct = gold_pct THEN false
                ELSE COALESCE(rat_eq(num_rat(pred_b), {'n': gold_n, 'd': gold_d})
                              OR (pred_pct <> gold_pct
                                  AND rat_eq(rat_pct(num_rat(pred_b), pred_pct), rat_pct({'n': gold_n, 'd': gold_d}, gold_pct))), false)
            END
            ELSE CASE WHEN hedge IS NOT NULL THEN false
                      WHEN not_a_number(COALESCE(pred, '')) THEN false
                      WHEN gold_verdict IS NOT NULL THEN COALESCE(pred_verdict = gold_verdict, false)
                      WHEN task = 'logic' THEN COALESCE(pred_formula <> '' AND pred_formula = gold_formula, false)
                      ELSE COALESCE(pred <> '' AND pred = gold, false) END
        END AS correct
    FROM routed
)
SELECT
    iteration, prompt_id, sample_idx, task,
    extracted AS extracted_answer,
    extraction,
    format_ok,
    correct,
    CAST(CASE WHEN correct THEN 1 ELSE 0 END AS DOUBLE) AS score,  -- correctness in [0, 1]; code may fill a fraction
    verifier,
    CASE
        WHEN correct IS NULL THEN NULL
        WHEN extraction = 'none' THEN 'no_answer: no <answer> tag, \boxed{} or number in the response'
        WHEN hedge IS NOT NULL THEN 'wrong: ' || hedge || ' in one response; one answer is expected (verify.multiple_answers = reject)'
        WHEN pred_formula IS NOT NULL THEN CASE WHEN correct THEN 'correct: ' || pred_formula || ' is the gold conclusion'
                                                ELSE 'wrong: empty answer, expected a conclusion such as ' || gold_formula END
        WHEN gold_verdict IS NOT NULL AND pred_verdict IS NULL AND pred <> ''
            THEN 'wrong: got ' || pred || ', expected ' || gold || ' (answer true, false or unknown)'
        WHEN correct THEN 'correct: ' || pred || ' = ' || gold
        WHEN pred = '' THEN 'wrong: empty answer, expected ' || gold
        ELSE 'wrong: got ' || pred || ', expected ' || gold
    END || CASE WHEN extraction IN ('boxed', 'last_number')
                THEN ' (no <answer> tag; taken from ' || extraction || ')' ELSE '' END AS reason,
    false AS verifier_error,
    n_tok,  -- response length, for verify_groups.sql's overlong shaping
    -- retrieval: filled by verify_citations.sql
    CAST(NULL AS INTEGER) AS citations,
    CAST(NULL AS INTEGER) AS citations_supported,
    CAST(NULL AS VARCHAR) AS citations_missing,
    -- only undecided rows carry what rlvr.verify.math needs: the raw gold and extracted texts
    CASE WHEN correct IS NULL THEN answer END AS undecided_gold,
    CASE WHEN correct IS NULL THEN pred END AS pred_norm,
    CASE WHEN correct IS NULL THEN gold END AS gold_norm
FROM decided
