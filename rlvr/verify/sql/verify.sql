-- verify(i), step 2: read and decide every row SQL can decide, into the temp table verify_rows (run by
-- rlvr.verify.scoring after verify_markers.sql; macros: normalise.sql, symbolic.sql, markers.sql). Rewards are
-- verify_rewards.sql's. Parameters: $problems (Parquet files), $tol (verify.numeric_tolerance), $strict_tasks,
-- $lenient_tasks, $strict_default (verify.extraction). What each rule reads: docs/verifiers.md.
-- verifier: sql_numeric (a value gold: the answer must be a value the contract lists, compared exactly, as
-- canonical decimal text or HUGEINT fractions), sql_exact (strings, verdicts, a symbolic answer identical to the
-- gold or not in its form: not_value), undecided (math-verify), code (the sandbox), logic (rlvr.verify.logic).
-- Speed: golds are read once per problem; each costly step runs only on the rows that need it (CASE evaluates a
-- branch on its own rows; OR and AND in a select list evaluate both sides); plain decimals skip normalisation.
CREATE OR REPLACE TEMP TABLE verify_rows AS
WITH golds0 AS (  -- each problem's gold, normalised once
    -- gold_tdec: the gold as a canonical decimal (with a finite expansion of at most 20 places); gold_texts: a
    -- decimal answer is decided against this text, also when the gold has no finite expansion; else num_rat.
    SELECT *,
        CASE WHEN gold_tdec IS NOT NULL THEN true ELSE COALESCE(rat_repeats(gold_n, gold_d), false) END AS gold_texts,
        -- answer_v, gold_v: a symbolic gold without a unit or an integer qualifier after it (value_tail)
        CASE WHEN gold_sym AND gold_num IS NULL AND regexp_matches(answer, '\\(?:text|mathrm|mbox|in)') THEN answer_t ELSE answer END AS answer_v,
        CASE WHEN gold_sym AND gold_num IS NULL AND regexp_matches(answer, '\\(?:text|mathrm|mbox|in)') AND answer_t <> answer
             THEN gold_t ELSE gold END AS gold_v
    FROM (
    SELECT * EXCLUDE (gold_rat, gold_q), gold_rat.n AS gold_n, gold_rat.d AS gold_d,  -- scalars: cheaper through the join
        COALESCE(gold_dec, q20_dec(gold_q)) AS gold_tdec,
        COALESCE(NOT contains(gold_dec, '.'), gold_rat.n % gold_rat.d = 0, false) AS gold_int
    FROM (
    SELECT *, CASE WHEN gold_dec IS NULL THEN rat_q20(gold_rat.n, gold_rat.d) END AS gold_q
    FROM (
    SELECT prompt_id, task, answer, gold, gold_sym, gold_body, answer_t, gold_t,
        -- a canonical integer ('42', '-7', '0': most golds) is its own canonical decimal
        CASE WHEN regexp_full_match(gold_body, '0|-?[1-9]\d*') THEN gold_body ELSE dec_canon(gold_body) END AS gold_dec,
        num_rat(gold_body) AS gold_rat,
        CASE WHEN isfinite(gold_num) THEN gold_num END AS gold_num, ends_with(gold_ntext, '%') AS gold_pct, strict,
        CASE WHEN task = 'logic' THEN norm_verdict(gold) END AS gold_verdict,
        CASE WHEN task = 'logic' THEN norm_formula(answer) END AS gold_formula
    FROM (
        SELECT *, looks_symbolic(gold) AS gold_sym, num_value(gold_body) AS gold_num
        FROM (
            SELECT *, sci_dec(num_body(gold_ntext)) AS gold_body  -- '1e3' is 1000
            FROM (
                -- gold_ntext: the gold as a number is read (a unit after it dropped: '5\text{ cm}' -> '5')
                SELECT * EXCLUDE (norms), norms[1] AS gold, CASE WHEN gold_unit <> '' THEN norms[2] ELSE norms[1] END AS gold_ntext,
                    norms[3] AS gold_t
                FROM (
                -- the gold, its number (unit_num) and its value (value_tail), normalised in one list: a macro written
                -- once is planned once (planning this query costs more than running it on the bench's rows)
                SELECT *, list_transform([answer, gold_unit, answer_t], lambda s: mark_norm(s)) AS norms
                FROM (
                    SELECT prompt_id, task, answer, value_tail(answer) AS answer_t,
                        CASE WHEN regexp_matches(answer, '[A-Za-z]') THEN unit_num(answer) ELSE '' END AS gold_unit,
                        list_contains($strict_tasks, task) OR ($strict_default AND NOT list_contains($lenient_tasks, task)) AS strict
                    FROM read_parquet($problems, hive_partitioning = false)
                )
                )
            )
        )
    )
    )
    )
    )
), golds AS (
    -- gs: what not_value asks of a symbolic gold, once per problem
    SELECT * EXCLUDE (g_shape, g_atoms, g_letters), CASE WHEN gold_sym AND gold_num IS NULL THEN {
        'shape': g_shape,
        'lb': left(replace(strip_name(gold_v), '\left', ''), 1), 'rb': right(replace(gold_v, '\right', ''), 1),
        'deg': regexp_matches(answer_v, '\^\s*\{?\s*\\circ|°'),
        'hedged': hedged(lower(norm_latex(answer_v))),
        'list': g_shape IN ('list', 'set') OR contains(gold_v, '\cup'),
        'eqs': length(gold_v) - length(replace(gold_v, '=', '')),
        'uneval': unevaluated(gold_v),
        'atoms': g_atoms,
        'atoms_max': g_atoms * CASE WHEN regexp_matches(answer_v, '\\pm|±') THEN 2 ELSE 1 END + 1,
        'words': text_words(answer_v),
        'dollars': length(answer_v) - length(replace(answer_v, '$', '')),
        'sci': regexp_matches(gold_v, '\de[-+]?\d'),
        'dec': regexp_matches(gold_v, '\d\.\d'), 'places': dec_places(gold_v),
        'letters': g_letters, 'lower_letters': list_transform(g_letters, lambda u: lower(u)),
        'upper': regexp_matches(answer_v, '[A-Z]')} END AS gs
    FROM (
        -- (what two fields of gs read, computed once)
        SELECT *, CASE WHEN gold_sym AND gold_num IS NULL THEN set_shape(gold_v) END AS g_shape,
            CASE WHEN gold_sym AND gold_num IS NULL THEN value_atoms(norm_latex(answer_v)) END AS g_atoms,
            CASE WHEN gold_sym AND gold_num IS NULL THEN letters(answer_v) END AS g_letters
        FROM golds0
    )
), readings AS (
    -- the answer a marker holds or, lenient and with no marker, the last line's lone number; a value gold reads it
    -- in the contract's forms (a value, with a unit or currency, the last side of an equation that holds)
    SELECT * EXCLUDE (lenient_num, extracted0, extraction),
        CASE WHEN extraction = 'none' AND NOT strict AND lenient_num IS NOT NULL THEN 'last_number' ELSE extraction END AS extraction,
        CASE WHEN extraction <> 'none' THEN extracted0 WHEN NOT strict THEN lenient_num END AS raw
    FROM (
        SELECT m.iteration, m.prompt_id, m.sample_idx, m.n_tok, m.format_ok, m.refused AS hedge, p.strict, m.extraction,
            m.extracted AS extracted0, p.gold_num IS NOT NULL AS value_gold, p.task, p.gold_num, p.answer_v, p.gold_v, p.gold_pct,
            p.gold_sym, p.gold_verdict, p.gold_formula, p.gold_n, p.gold_d, p.gold_int, p.gold_tdec, p.gold_texts, p.gold_body, p.gs,
            CASE WHEN NOT p.strict AND m.lenient_line IS NOT NULL THEN nullif(lenient_number(m.lenient_line), '') END AS lenient_num
        FROM verify_markers AS m JOIN golds AS p USING (prompt_id)
    )
), extractions AS (
    SELECT * EXCLUDE (raw, v),
        CASE WHEN v IS NOT NULL AND contains(v, '=') AND NOT regexp_matches(v, '[<>!]=|\\[lgn]eq?\b|\\ge\b|\\le\b')
             THEN COALESCE(value_unit(eq_last(v)), v) ELSE v END AS extracted
    FROM (
        SELECT *, CASE WHEN raw IS NULL OR NOT value_gold THEN raw  -- symbolic, strings, verdicts: read as written
                       WHEN regexp_matches(raw, '[A-Za-z]|\$[^$]*\$|\\\(') THEN
                       -- ('$18$', '\(18\)' around the whole: math delimiters)
                       value_unit(trim(regexp_replace(raw, '^\s*(?:\$([^$]*)\$|\\\((.*)\\\))[\s.]*$', '\1\2')))
                       ELSE trim(raw) END AS v  -- (no delimiters to drop, no unit: value_unit needs a letter)
        FROM readings
    )
), plain_flags AS (
    -- fast path: most answers are already a plain decimal ('42', '-3.5'); only the others are normalised
    SELECT extractions.*, plain_decimal(extracted) AS plain
    FROM extractions
), normalised AS (
    -- pred: the answer's text form (exact and symbolic comparisons); npred: the same, as reasons name it
    SELECT *, pred AS npred
    FROM (
        SELECT plain_flags.*,
            CASE WHEN plain THEN extracted
                 -- digits and signs only: norm_answer comes down to these steps
                 WHEN regexp_full_match(extracted, '[0-9,.$€£−+%-]+')
                     THEN regexp_replace(replace(replace(replace(replace(extracted, '$', ''), '€', ''), '£', ''), '−', '-'), '^\+|\.$', '', 'g')
                 -- a mixed number written with a space ('1 1/2') is 1\frac{1}{2} (num_rat: a proper fraction only)
                 WHEN regexp_full_match(extracted, '\s*[-−]?\d+\s+\d+/\d+\s*')
                     THEN regexp_replace(trim(replace(extracted, '−', '-')), '^(-?\d+)\s+(\d+)/(\d+)$', '\1\\frac{\2}{\3}')
                 ELSE norm_answer(extracted) END AS pred
        FROM plain_flags
    )
), bodies AS (
    SELECT normalised.*, NOT plain AND ends_with(npred, '%') AS pred_pct,
        -- '1.9e1' is 19 (written so: '1.9 e1' is no number, though norm_answer removed its space)
        CASE WHEN NOT plain THEN CASE WHEN regexp_matches(extracted, '\d[eE][-+]?\d') THEN sci_dec(num_body(npred))
                                      -- '1.2 × 10¹': the exponent in superscript digits
                                      WHEN regexp_full_match(npred, '-?\d+(?:\.\d+)?(?:\\times|\\cdot|×)10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}')
                                          THEN sci_dec(translate(regexp_replace(npred, '(?:\\times|\\cdot|×)10', 'e'),
                                                                 '⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹', '-+0123456789'))
                                      -- a repeating decimal in another notation (rep_notation)
                                      WHEN regexp_matches(npred, '\d\.\d*(?:\(\d+\)$|\\(?:bar|dot)|\.\.|…|\\[lc]?dots)') THEN rep_notation(npred)
                                      -- '1.9 \times 10^{1}', '6.02 \cdot 10^{23}': the same, in LaTeX
                                      WHEN contains(npred, '10^') AND regexp_full_match(npred, '-?\d+(?:\.\d+)?(?:\\times|\\cdot|×)10\^\{?[-+]?\d{1,3}\}?')
                                          THEN sci_dec(regexp_replace(npred, '^(-?\d+(?:\.\d+)?)(?:\\times|\\cdot|×)10\^\{?([-+]?\d{1,3})\}?$', '\1e\2'))
                                      ELSE num_body(npred) END END AS pred_body
    FROM normalised
), decimals AS (
    -- pred_dec (dec_canon in steps, no part computed twice)
    SELECT * EXCLUDE (dec_s, dec_ip, dec_fp),
        CASE WHEN dec_ip IS NULL THEN dec_s ELSE dec_parts(starts_with(dec_s, '-'), dec_ip, dec_fp) END AS pred_dec
    FROM (
        SELECT *, CASE WHEN need THEN split_part(ltrim(dec_s, '-'), '.', 1) END AS dec_ip,
            CASE WHEN need THEN split_part(dec_s, '.', 2) END AS dec_fp
        FROM (
            SELECT *, dec_s IS NOT NULL AND (contains(dec_s, '.') OR starts_with(dec_s, '0') OR starts_with(dec_s, '-0')) AS need
            FROM (
                SELECT bodies.*, CASE WHEN NOT plain THEN num_value(pred_body) WHEN $tol > 0 THEN TRY_CAST(pred AS DOUBLE) END AS pred_num0,
                    CASE WHEN plain THEN pred
                         WHEN regexp_full_match(pred_body, '-?(?:\d+\.?\d*|\.\d+)') THEN pred_body END AS dec_s
                FROM bodies
            )
        )
    )
), joined0 AS (
    SELECT h.iteration, h.prompt_id, h.sample_idx, h.n_tok, h.format_ok, h.extraction,
        h.extracted AS extracted0, h.pred AS pred0,
        -- sx0: a symbolic gold's answer; joined reads it without Unicode math, units or an integer qualifier
        CASE WHEN h.gold_sym AND h.gold_num IS NULL THEN h.extracted END AS sx0,
        h.npred, h.pred_pct, CASE WHEN isfinite(h.pred_num0) THEN h.pred_num0 END AS pred_num, h.pred_dec,
        h.hedge,
        CASE WHEN h.plain THEN h.pred ELSE h.pred_body END AS pred_b,
        h.task, h.gold_num, h.answer_v AS answer, h.gold_v AS gold, h.gold_pct, h.gold_sym, h.gold_verdict, h.gold_formula,
        h.gold_n, h.gold_d, h.gold_int, h.gold_tdec, h.gold_texts, h.gold_body, h.gs,
        -- no answer where the contract asks for one (verify.extraction = 'strict', the default)
        h.strict AND h.extraction = 'none' AS unasked,
        -- a verdict negated by a tilde is no verdict ('~true'; norm_latex reads '~' as a LaTeX space)
        CASE WHEN h.gold_verdict IS NOT NULL AND NOT regexp_matches(h.extracted, '[~～∼˜]') THEN norm_verdict(h.pred) END AS pred_verdict,
        CASE WHEN h.task = 'logic' AND h.gold_verdict IS NULL THEN norm_formula(h.extracted) END AS pred_formula
    FROM decimals AS h  -- (the gold's columns came with the first join, in readings)
), joined AS (
    -- a symbolic answer read in steps: Unicode math, a unit or qualifier after it dropped (uni_math, value_tail),
    -- and a chain of '=' whose earlier sides compute the last read as its last side (eq_computed)
    SELECT * EXCLUDE (extracted0, pred0, sx0, sx2, sx3, sx),
        COALESCE(sx, extracted0) AS extracted,
        CASE WHEN sx IS NOT NULL AND sx <> extracted0 THEN norm_answer(sx) ELSE pred0 END AS pred
    FROM (SELECT *, CASE WHEN sx3 IS NOT NULL AND contains(sx3, '=') AND NOT contains(gold, '=') AND eq_computed(sx3)
                         THEN trim(regexp_extract(sx3, '[^=]*$', 0)) ELSE sx3 END AS sx
    FROM (SELECT *, CASE WHEN sx2 IS NOT NULL THEN value_tail(sx2) END AS sx3
          FROM (SELECT *, CASE WHEN sx0 IS NOT NULL THEN uni_math(sx0) END AS sx2 FROM joined0)))
), routed AS (
    SELECT *,
        CASE
            WHEN task = 'code' THEN 'code'  -- decided by running it: rlvr.verify.code, via verify_code.sql
            WHEN task = 'exact' THEN 'sql_exact'  -- datasets with verifier = 'exact': strings only, never read as numbers
            WHEN unasked THEN CASE WHEN gold_num IS NOT NULL THEN 'sql_numeric' ELSE 'sql_exact' END  -- wrong: no answer where one is required
            WHEN hedge IS NOT NULL THEN 'sql_exact'  -- several answers: wrong ($multiple = 'reject', or several final values)
            WHEN gold_verdict IS NOT NULL THEN 'sql_exact'  -- logic verdicts
            WHEN task = 'logic' THEN CASE WHEN COALESCE(pred_formula, '') IN ('', gold_formula) THEN 'sql_exact' ELSE 'logic' END
            -- a value gold takes a value: an expression, even an equal one ('3*4'), restates the question
            WHEN gold_num IS NOT NULL THEN 'sql_numeric'
            WHEN COALESCE(pred, '') = '' THEN 'sql_exact'
            WHEN NOT gold_sym THEN 'sql_exact'
            -- the same text in lower case: paid only when the case agrees too (math-verify, which keeps case, decides)
            WHEN pred = gold AND norm_cased(extracted) = norm_cased(answer) THEN 'sql_exact'
            WHEN not_value IS NOT NULL THEN 'sql_exact'  -- wrong: see not_value
            ELSE 'undecided'
        END AS verifier
    FROM (
        -- not_value: why a symbolic answer is not in the gold's form; a gold that is itself such a form allows it
        SELECT *, CASE WHEN gs IS NULL OR COALESCE(pred, '') = '' THEN NULL
                       -- a letter the gold has in the other case ('n^2+1' for N^2+1): another variable
                       WHEN case_clash(extracted, gs.letters, gs.lower_letters, gs.upper)
                           THEN 'a variable or constant in another case than the gold''s: ' || trim(extracted) || ' against ' || answer
                       -- a question mark: a guess put as a question ('2\sqrt{3}-1\text{?}'), no answer stated
                       WHEN contains(extracted, '?') THEN 'a question, not an answer'
                       -- degrees for a gold without them ('\frac{\pi}{6}^\circ' is not \frac{\pi}{6}; norm_answer drops them)
                       WHEN regexp_matches(extracted, '\^\s*\{?\s*\\circ|°') AND NOT gs.deg
                           THEN 'degrees, for a gold without them'
                       WHEN pred = gold THEN NULL
                       -- plain words in the marker: the contract reads a value, never prose
                       WHEN regexp_matches(regexp_replace(named, '\\[A-Za-z]+', ' ', 'g'), '[A-Za-z]{2,}\s+[A-Za-z]{2,}') AND NOT gs.list
                            AND NOT regexp_matches(answer, '[A-Za-z]{2,}\s+[A-Za-z]{2,}')
                           THEN 'words inside the marker'
                       -- a set for a tuple or an interval, a bare list for either, or the reverse
                       WHEN gs.shape IN ('set', 'tuple') AND pshape NOT IN ('', gs.shape)
                            AND NOT (gs.shape = 'set' AND pshape = 'list')  -- '1, 2, 3' lists a set
                           THEN 'a ' || pshape || ' for a ' || gs.shape
                       WHEN gs.shape = 'tuple' AND pshape = 'tuple'  -- '[2, \infty]' is not [2, \infty)
                            AND (left(replace(strip_name(pred), '\left', ''), 1) <> gs.lb
                                 OR right(replace(pred, '\right', ''), 1) <> gs.rb)
                           THEN 'another interval: the brackets differ from the gold''s'
                       WHEN gs.shape = 'list' AND pshape = 'tuple'  -- '(1, 2)' is a pair or an interval, not 1 and 2
                           THEN 'a tuple for a list'
                       -- (a gold of several values may be written with 'or' and '=': math-verify decides those)
                       WHEN hedged(lower(norm_latex(extracted))) AND NOT gs.hedged AND NOT gs.list
                           THEN 'several values, one answer is expected'
                       WHEN contains(pred, '=') AND NOT contains(gold, '=') AND contains(named, '=')  -- (the raw text: a name is told by its case)
                            AND NOT gs.list
                           THEN 'several values joined by =, one answer is expected'
                       -- more '=' than the gold has ('x = 3 = 2' for x = 2: math-verify reads the last side)
                       WHEN contains(gold, '=') AND length(pred) - length(replace(pred, '=', '')) > gs.eqs
                           THEN 'several values joined by =, one answer is expected'
                       WHEN unevaluated(pred) AND NOT gs.uneval
                           THEN 'an unevaluated expression: the answer must be a value in the gold''s form, simplified'
                       WHEN ops_beyond(lower(named), gold)  -- ('\cos\theta = \frac{\sqrt{3}}{2}': a name, not an operation)
                           THEN 'a function the gold does not use: the answer must be a value in the gold''s form, simplified'
                       -- more values than the gold's form, by more than one (a gold with \pm is two values)
                       WHEN value_atoms(norm_latex(named)) > gs.atoms_max
                           THEN 'written with more terms than the gold''s form (' || value_atoms(norm_latex(named))
                                || ' values against ' || gs.atoms || '): simplify it'
                       -- words in \text{} beside a symbolic answer: math-verify skips them, so they could deny it unread
                       WHEN text_words(CASE WHEN gs.list  -- 'x = 3 \text{ or } x = 5' lists
                                            THEN regexp_replace(named, '\\text\s*\{\s*(?:or|and)\s*\}', ',', 'g')
                                            ELSE named END) AND NOT gs.words
                           THEN 'words beside a symbolic answer, which math-verify would not read'
                       -- several math spans ('$e$ $\pi$': math-verify reads one of them)
                       WHEN length(extracted) - length(replace(extracted, '$', '')) > 2 AND gs.dollars <= 2
                           THEN 'several values in separate $...$, one answer is expected'
                       -- scientific notation for a symbolic gold ('2e1' for 2e: math-verify reads 2 e 1)
                       WHEN regexp_matches(pred, '\de[-+]?\d') AND NOT gs.sci
                           THEN 'a number in scientific notation; the gold is symbolic'
                       -- an approximation of a closed form, three places or more ('(0.5, 3)' is exact)
                       WHEN regexp_matches(pred, '\.\d{3}') AND NOT gs.dec
                           THEN 'a decimal approximation; the gold is exact'
                       -- more decimal places than the gold has ('(0.5000004, 3)' for (0.5, 3): math-verify rounds to 6)
                       WHEN gs.dec AND dec_places(pred) > gs.places
                           THEN 'a decimal approximation: more decimal places than the gold''s' END AS not_value
        FROM (
            -- named: the raw answer without a name in front (strip_name); pshape: its set shape
            SELECT *, CASE WHEN gs IS NOT NULL AND COALESCE(pred, '') <> '' THEN strip_name(extracted) END AS named,
                CASE WHEN gs IS NOT NULL AND COALESCE(pred, '') <> '' THEN set_shape(pred) END AS pshape
            FROM joined
        )
    )
), decided AS (
    SELECT *,
        CASE WHEN verifier IN ('undecided', 'code', 'logic') THEN NULL
            WHEN verifier = 'sql_numeric' THEN CASE  -- each branch runs on its own rows only
                WHEN unasked OR frac_open OR split_num THEN false
                -- a decimal answer against the gold's decimal text: exact, any length; a % on one side only
                -- also as x/100 ('50%' = '0.5')
                WHEN pred_dec IS NOT NULL AND (pred_dec = gold_tdec OR (pred_pct <> gold_pct
                     AND pred_dec = CASE WHEN pred_pct THEN dec_x100(gold_tdec) ELSE dec_d100(gold_tdec) END)) THEN true
                WHEN $tol > 0 AND NOT gold_int AND COALESCE(
                    num_close(pred_num, gold_num, $tol)
                    OR (pred_pct <> gold_pct
                        AND num_close(CASE WHEN pred_pct THEN pred_num / 100 ELSE pred_num END,
                                      CASE WHEN gold_pct THEN gold_num / 100 ELSE gold_num END, $tol)), false) THEN true
                WHEN pred_dec IS NOT NULL AND gold_texts THEN false
                -- fractions and repeating decimals (either side), exactly as HUGEINT fractions
                ELSE COALESCE(rat_eq(pred_rat, {'n': gold_n, 'd': gold_d})
                              OR (pred_pct <> gold_pct
                                  AND rat_eq(rat_pct(pred_rat, pred_pct), rat_pct({'n': gold_n, 'd': gold_d}, gold_pct))), false)
            END
            ELSE CASE WHEN unasked OR hedge IS NOT NULL OR not_value IS NOT NULL THEN false
                      WHEN not_a_number(COALESCE(pred, '')) THEN false
                      WHEN gold_verdict IS NOT NULL THEN COALESCE(pred_verdict = gold_verdict, false)
                      WHEN task = 'logic' THEN COALESCE(pred_formula <> '' AND pred_formula = gold_formula, false)
                      ELSE COALESCE(pred <> '' AND pred = gold, false) END
        END AS correct
    FROM (
        -- frac_open: a fraction not in lowest terms ('24/2' for 12) is a division still to do, unless the gold is one
        SELECT *, CASE WHEN pred_rat IS NOT NULL AND (contains(pred_b, '/') OR contains(pred_b, 'frac'))
                            AND pred_b <> COALESCE(gold_body, '') AND (gcd(pred_rat.n, pred_rat.d) <> 1 OR pred_rat.d = 1)
                       THEN true ELSE false END AS frac_open,  -- (CASE: the HUGEINT gcd on the fraction rows only)
            -- split_num: digits split by spacing other than thousands groups (digit_gap) are several numbers
            CASE WHEN verifier = 'sql_numeric' AND NOT unasked AND digit_gap(extracted) AND NOT contains(pred_b, 'frac') THEN NOT digit_gap(answer)
                 ELSE false END AS split_num
        FROM (
        -- pred_rat: the answer as a fraction (num_rat), only on the rows the texts leave open
        SELECT *, CASE WHEN verifier = 'sql_numeric' AND NOT unasked AND (pred_dec IS NULL OR NOT gold_texts)
                       THEN num_rat(pred_b) END AS pred_rat
        FROM routed
        )
    )
)
SELECT
    iteration, prompt_id, sample_idx, task,
    CASE WHEN NOT unasked THEN extracted END AS extracted_answer,
    CASE WHEN unasked THEN 'none' ELSE extraction END AS extraction,
    format_ok,
    correct,
    CAST(CASE WHEN correct THEN 1 ELSE 0 END AS DOUBLE) AS score,  -- correctness in [0, 1]; code may fill a fraction
    verifier,
    CASE
        WHEN correct IS NULL THEN NULL
        WHEN hedge LIKE 'an <answer>%' OR hedge LIKE 'a \boxed%' THEN 'no_answer: ' || hedge
        WHEN unasked THEN 'no_answer: no answer marker (<answer>, \boxed{}, ####, a final-answer line) in the response '
                          || '(verify.extraction = strict for task ' || task || ')'
        WHEN extraction = 'none' THEN 'no_answer: no answer marker, and no lone number ends the last line (verify.extraction = lenient)'
        WHEN hedge IS NOT NULL THEN 'wrong: ' || hedge
        WHEN not_value IS NOT NULL THEN 'wrong: got ' || pred || ', expected ' || gold || ' (' || not_value || ')'
        WHEN split_num THEN 'wrong: got ' || extracted || ', expected ' || gold
                            || ' (digits split by spaces are several numbers; one number groups them by three: 1 000 000)'
        WHEN frac_open THEN 'wrong: got ' || npred || ', expected ' || gold
                            || ' (a fraction not in lowest terms is a division still to be done; the gold is a value)'
        WHEN pred_formula IS NOT NULL THEN CASE WHEN correct THEN 'correct: ' || pred_formula || ' is the gold conclusion'
                                                ELSE 'wrong: empty answer, expected a conclusion such as ' || gold_formula END
        WHEN gold_verdict IS NOT NULL AND pred_verdict IS NULL AND pred <> ''
            THEN 'wrong: got ' || pred || ', expected ' || gold || ' (answer true, false or unknown)'
        WHEN verifier = 'sql_numeric' AND correct THEN 'correct: ' || npred || ' = ' || gold
        WHEN correct THEN 'correct: ' || pred || ' = ' || gold
        WHEN pred = '' THEN 'wrong: empty answer, expected ' || gold
        WHEN verifier = 'sql_numeric' AND pred_dec IS NULL AND pred_num IS NULL AND pred_rat IS NULL
            THEN 'wrong: refused by the contract: ' || form_refused(extracted) || ' (' || extracted || '); the gold, '
                 || gold || ', is a value'
        WHEN verifier = 'sql_numeric' THEN 'wrong: got ' || npred || ', expected ' || gold
        ELSE 'wrong: got ' || pred || ', expected ' || gold
    END || CASE WHEN extraction IN ('boxed', 'gsm8k', 'final_line', 'last_number') AND NOT unasked
                THEN ' (no <answer> tag; taken from ' || extraction || ')' ELSE '' END AS reason,
    false AS verifier_error,
    n_tok,  -- response length, for verify_groups.sql's overlong shaping
    -- retrieval: filled by verify_citations.sql
    CAST(NULL AS INTEGER) AS citations,
    CAST(NULL AS INTEGER) AS citations_supported,
    CAST(NULL AS VARCHAR) AS citations_missing,
    -- only undecided rows carry what rlvr.verify.math needs: the raw gold and extracted texts
    CASE WHEN correct IS NULL THEN answer END AS undecided_gold,
    -- math-verify reads the answer without a name in front when the gold has none ('E_k = \frac{1}{2}mv^2'), and
    -- its digits in ASCII, as the rules above read them (it cannot parse '\sqrt{١٢}')
    CASE WHEN correct IS NULL THEN norm_digits(CASE WHEN contains(gold, '=') THEN extracted ELSE strip_name(extracted) END) END
        AS undecided_pred,
    CASE WHEN correct IS NULL THEN pred END AS pred_norm,
    CASE WHEN correct IS NULL THEN gold END AS gold_norm
FROM decided
