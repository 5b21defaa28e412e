-- verify(i), pass 1 of 2: extract, normalise and decide every rollout row SQL can decide, into the
-- connection's temp table verify_rows (run by rlvr.verify.scoring; macros from macros.sql).
-- Parameters: $rollouts, $problems (lists of Parquet files), $tol (relative numeric tolerance, for
-- golds that are not integers only), $format_mode ('answer': format_ok = an <answer> tag;
-- 'think_answer': macros.sql think_answer_ok), $multiple ('reject': a response with several <answer>
-- tags, or several \boxed{} and no tag, that do not all hold one answer is wrong (a hedge); 'last':
-- the last one counts), $strict_tasks, $lenient_tasks, $strict_default (verify.extraction: in a
-- strict task only a tag or a box is an answer, never the last number).
-- Rewards are not set here: verify_groups.sql weighs the components (score, format_ok, citations).
--
-- Extraction, from the response without its closed <think>...</think> spans (what is quoted while
-- reasoning is no answer) and its closed <cite>...</cite> spans (a quote of the sources is evidence:
-- '<cite>The ferry carried 29 passengers.</cite>' alone states no answer, so its 29 is not read):
-- <answer>...</answer> (format_ok; the only opening tag and the nearest closing one, or the last
-- under $multiple = 'last'; several tags that all hold one answer, empty ones aside, are that
-- answer), then the only (or last) \boxed{...} (braces nested up to five levels, e.g.
-- \boxed{\frac{\sqrt{\frac{1}{2}}}{3}}; a \boxed{ no pattern reads is no answer), then, in a lenient
-- task, the last number in the text (thousands commas, a fraction a/b, a repeating
-- decimal 12.\overline{3} and a trailing % included) unless the text opens an <answer> tag it never
-- closes. An answer stated in words and then checked plainly is read where it
-- is stated ('The answer is 21.\n\nCheck: 21 ÷ 3 = 7 ✓' is 21: macros.sql stated_answer, only_check).
-- A last number denied after another one leaves that one to be read ('12, not 13' is 12: macros.sql denied_last), and
-- so does a computation in brackets after it ('36 (12 × 3)' is 36: bracket_computation). For a symbolic gold, the last math span ($...$, \(...\), ...) when no digit follows it,
-- read as a whole (contexts below: Minerva's 'The final answer is $2\sqrt{3}-1$.' is 2\sqrt{3}-1, not 1).
-- A last number that the number before it hedges ('12 (or 13)', '12 \approx 13', '12 = 13' but not
-- '4 \times 3 = 12', the value of a computation,
-- '12 \to 13', '12 | 13', '12 vs. 13', a range '12–13', a trailing list '11, 12, 13': macros.sql
-- number_hedge), or that the text denies or only asks about ('not 13', 'neither 12 nor 13', '13 is
-- wrong', 'is it 13?': macros.sql number_denied), or whose value what is around it changes ('12²',
-- '12½', '12 thousand', 'minus 12', '√12': macros.sql value_suffix, value_prefix), is wrong whatever
-- $multiple says.
-- The one tag or box is read in its context by the same rules (contexts below): '$\boxed{12}$ is wrong',
-- 'is it <answer>12</answer>?', '<answer>12</answer> or 13', 'about $\boxed{12}$', '$-\boxed{12}$',
-- '$\boxed{12}^2$', '$\boxed{12}\times 10^3$' are wrong (round 13); text over 80 characters after it is not read.
-- Decision (verifier):
--   sql_numeric  gold is a value (macros.sql num_value, after a unit is dropped: '5\text{ cm}'): the
--                answer must be a value too: a number SQL reads (scientific notation '1.9e1' too, exactly:
--                macros.sql sci_dec), or the one number among plain words
--                ('The total is 19': macros.sql word_num); an expression, even an equal one ('3 * 4',
--                '\binom{10}{3}', '\sqrt{144}': the question echoed or left to evaluate), is wrong.
--                The prediction is compared by value, exactly and never as DOUBLE: a decimal
--                answer as canonical text (dec_canon, any length) against the gold's exact decimal
--                (golds.gold_tdec: a fraction with a finite expansion of at most 20 places is one:
--                '3/4' is '0.75'; one with none, '1/3', equals no decimal), fractions and repeating
--                decimals as HUGEINT fractions (num_rat, up to 17 digits; a fraction not in lowest terms,
--                '24/2', '12/1', '14/16', is a division still to be done and wrong: frac_open; digits split
--                by spaces other than thousands groups, '1 2' or '12 13', are several numbers: split_num), and within
--                |pred - gold| <= tol * max(1, |gold|) only when tol > 0 and the gold is not an integer.
--                NaN and infinities are never correct. A % on one side only is read both ways,
--                '50%' = '50' (the unit dropped, GSM8K style) and '50%' = '0.5' (x/100), so neither
--                convention is scored wrong; with % on both sides the numbers must match.
--                Tests: tests/test_verify_exact.py (against Python fractions, at the edges).
--   sql_exact    task 'exact' (a dataset's verifier = 'exact'), or gold is neither a number nor symbolic:
--                the normalised strings must be equal; or gold is
--                symbolic and the normalised strings are identical (identical text: equivalent); or
--                gold is symbolic and the answer is not in its shape (not_value: macros.sql
--                unevaluated arithmetic 'x^2+2-1', hedged several values '3.46 \approx 2\sqrt{3}', an
--                '=' other than 'x = ...', words in \text{} that math-verify would skip, a decimal
--                approximation '3.464102' of a closed form, a closed form left unsimplified
--                '\frac{2\sqrt{2}}{12}', '\sqrt{36}', '\cos 0' (macros.sql unsimplified), a kind of operation the
--                gold has none of (ops_beyond: '\sin\frac{\pi}{2}'), more values than the gold is written
--                with, by more than one (value_atoms: 'x^2+1+x-x'), a decimal inside a closed form, a set for a
--                tuple or interval, a bare list for either, or the reverse (set_shape)): wrong, unless the gold
--                is such an expression itself;
--                and a letter the gold has in another case ('n^2+1' for N^2+1: macros.sql case_clash) is wrong.
--   undecided    gold is symbolic (looks_symbolic) and SQL cannot compare them:
--                rlvr.verify.math fills these rows (verifier math_verify), then verify_groups.sql runs.
--   code         task 'code': run in the sandbox (rlvr.verify.code via verify_code.sql).
--   logic        task 'logic' with a formula answer that is not the gold one, spelled alike
--                (norm_formula): rlvr.verify.logic checks it against the premises and the variable to
--                eliminate in the problem's meta (verify_logic.sql).
--                Verdict answers (gold true/false/unknown, norm_verdict) are sql_exact.
-- Speed (bench/verify.py; EXPLAIN ANALYZE): gold answers are normalised once per problem, not once
-- per response; each regex runs only on the rows that need it (CASE branches are evaluated on their
-- own rows only): the boxed one on untagged texts that contain '\boxed{', the last-number one on
-- the rest; plain decimals skip normalisation. RE2 is several times faster when asked for the whole
-- match (group 0, its DFA) than for a capture group, so captures run only on short strings (the
-- hedge before a last number: the 48 characters before it). List functions cost on every row even
-- for a NULL list, so they sit inside CASE branches of the rows with several tags or boxes.
CREATE OR REPLACE TEMP TABLE verify_rows AS
WITH golds0 AS (  -- each problem's gold, normalised once
    -- gold_tdec: the gold's value as a canonical decimal (a decimal gold, or a fraction or repeating
    -- decimal with a finite expansion of at most 20 places: '3/4' -> '0.75'); gold_texts: a decimal
    -- answer is decided by comparing it with this text (exact at any length), which also holds when the
    -- gold has no finite expansion ('1/3': no decimal equals it). Otherwise the answer goes to num_rat.
    -- (OR and AND in a select list evaluate both sides on every row; CASE evaluates each branch on
    -- its own rows only, so the costly HUGEINT steps below run only where the cheap ones leave a gap)
    SELECT *,
        CASE WHEN gold_tdec IS NOT NULL THEN true ELSE COALESCE(rat_repeats(gold_n, gold_d), false) END AS gold_texts,
        -- answer_v, gold_v: a symbolic gold without a unit or an integer qualifier after it (macros.sql value_tail)
        CASE WHEN gold_sym AND gold_num IS NULL AND regexp_matches(answer, '\\(?:text|mathrm|mbox|in)')
             THEN value_tail(answer) ELSE answer END AS answer_v,
        CASE WHEN gold_sym AND gold_num IS NULL AND regexp_matches(answer, '\\(?:text|mathrm|mbox|in)') AND value_tail(answer) <> answer
             THEN norm_answer(value_tail(answer)) ELSE gold END AS gold_v
    FROM (
    SELECT * EXCLUDE (gold_rat, gold_q), gold_rat.n AS gold_n, gold_rat.d AS gold_d,  -- scalars: cheaper through the join
        COALESCE(gold_dec, q20_dec(gold_q)) AS gold_tdec,
        COALESCE(NOT contains(gold_dec, '.'), gold_rat.n % gold_rat.d = 0, false) AS gold_int
    FROM (
    SELECT *, CASE WHEN gold_dec IS NULL THEN rat_q20(gold_rat.n, gold_rat.d) END AS gold_q
    FROM (
    SELECT prompt_id, task, answer, gold, gold_sym, gold_body, 
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
                SELECT *, CASE WHEN gold_unit <> '' THEN norm_answer(gold_unit) ELSE gold END AS gold_ntext
                FROM (
                SELECT *, CASE WHEN regexp_matches(answer, '[A-Za-z]') THEN unit_num(answer) ELSE '' END AS gold_unit
                FROM (
                    SELECT prompt_id, task, answer,  -- a plain decimal gold is its own normal form
                        CASE WHEN plain_decimal(answer) THEN answer ELSE norm_answer(answer) END AS gold,
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
    -- gs: what not_value asks of a symbolic gold, once per problem (answer_v and gold_v as not_value
    -- reads them: raw and normalised), not once per response
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
), texts AS (
    -- t: the response without its <think>...</think> spans: tags, boxes and numbers quoted while
    -- reasoning are not answers (an instruction's '<answer></answer>' is not a second tag). Only a
    -- closed <think> span is dropped, so a stray '</think>' hides nothing.
    -- A closed <cite>...</cite> span is dropped too: a quote of the sources is evidence, not the answer
    -- (verify_citations.sql reads the spans from response_text); a number inside it is no last number.
    SELECT * EXCLUDE (t0),
        CASE WHEN contains(t0, '<cite>') THEN regexp_replace(t0, '(?s)<cite>.*?</cite>', ' ', 'g') ELSE t0 END AS t
    FROM (
    SELECT iteration, prompt_id, sample_idx, num_response_tokens AS n_tok,
        $format_mode = 'think_answer' AND think_answer_ok(response_text) AS think_ok,  -- the whole text, tags in <think> too
        CASE WHEN contains(response_text, '<think>') THEN regexp_replace(r0, '(?s)<think>.*?</think>', ' ', 'g')
             ELSE r0 END AS t0
    FROM (
        -- a zero-width character is a space ('1<U+200B>9' is two numbers, as '1 9'); inline HTML tags are
        -- no text ('<b>19</b>', '<span>19</span>' are 19; looked for by their closing tag)
        -- (cheap tests first: a regex over every text costs a quarter of pass 1)
        SELECT *, CASE WHEN strlen(response_text) <> length(response_text) OR contains(response_text, '</b>')
                            OR contains(response_text, '</strong>') OR contains(response_text, '</span>')
                            OR contains(response_text, '</em>') OR contains(response_text, '</i>')
                       THEN regexp_replace(regexp_replace(response_text, '[\x{200B}-\x{200D}\x{2060}\x{FEFF}]', ' ', 'g'),
                                           '(?i)</?(?:b|strong|em|i|u|span|mark|sup|sub)>', '', 'g')
                       ELSE response_text END AS r0
        FROM read_parquet($rollouts, hive_partitioning = false)
    )
    )
), tag_segments AS (
    -- seg: the text after the first '<answer>' up to the next one. When seg holds a '</answer>', the
    -- body is seg up to it: exactly what the lazy regex '(?s)<answer>(.*?)</answer>' extracts, for a
    -- third of its cost (measured: bench/README.md). Only a second '<answer>' before the first
    -- '</answer>' falls back to the regex itself.
    -- n_tags: 0, 1 or 2 (two or more: a second '<answer>', where seg1 ends before the end of the text)
    SELECT *, CASE WHEN n_tags > 1 AND $multiple = 'last' THEN string_split(t, '<answer>')[-1] ELSE seg1 END AS seg
    FROM (
        SELECT *, CASE WHEN seg1 IS NULL THEN 0 WHEN t LIKE '%<answer>%<answer>%' THEN 2 ELSE 1 END AS n_tags  -- (bytes: no length() to count)
        FROM (
            SELECT *, CASE WHEN contains(t, '<answer>') THEN split_part(t, '<answer>', 2) END AS seg1
            FROM texts
        )
    )
), tag_bodies AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, think_ok, t, n_tags,
        CASE WHEN seg IS NULL THEN NULL
             WHEN contains(seg, '</answer>') THEN split_part(seg, '</answer>', 1)
             WHEN n_tags > 1 AND $multiple = 'last' THEN NULL  -- the last opening tag is never closed
             WHEN regexp_matches(t, '(?s)<answer>.*?</answer>')
                 THEN regexp_extract(t, '(?s)<answer>(.*?)</answer>', 1) END AS tag_body0,
        -- several tags: their bodies, when every tag is closed before the next one opens
        CASE WHEN n_tags > 1 THEN list_filter(regexp_extract_all(t, '(?s)<answer>(.*?)</answer>', 1), lambda b: NOT contains(b, '<answer>')) END AS bodies,
        CASE WHEN n_tags > 1 THEN (length(t) - length(replace(t, '<answer>', ''))) // 8 END AS n_open
    FROM tag_segments
), tag_agree AS (
    -- several tags that hold one answer (equal after norm_answer; empty ones aside) are that answer:
    -- '<answer>42</answer> <answer>42</answer>' is not a hedge
    SELECT * EXCLUDE (tag_body0, bodies, n_open, said),
        CASE WHEN agree THEN COALESCE(said[1], '') ELSE tag_body0 END AS tag_body,
        CASE WHEN agree THEN 1 ELSE n_tags END AS n_answers
    FROM (
        SELECT *, CASE WHEN n_tags > 1  -- list functions cost even on NULL lists: only rows with several tags pay
                       THEN COALESCE(len(bodies) = n_open AND len(list_distinct(list_transform(said, lambda b: norm_answer(b)))) <= 1, false)
                       ELSE false END AS agree
        FROM (SELECT *, CASE WHEN n_tags > 1 THEN list_filter(bodies, lambda b: norm_answer(b) <> '') END AS said FROM tag_bodies)
    )
), hedges AS (
    SELECT *, CASE WHEN n_answers > 1 AND has_tag THEN 'several <answer> tags'
                   WHEN n_boxed > 1 AND NOT boxes_agree THEN 'several \boxed{} answers' END AS hedge,
        -- untagged: no tag, no box and no unclosed tag: the last number, or a symbolic gold's last math span, is read
        NOT has_tag AND boxed = '' AND NOT box_bad AND n_tags = 0 AS untagged
    FROM (
        SELECT *, CASE WHEN box_m IS NULL THEN '' ELSE substr(box_m, 8, length(box_m) - 8) END AS boxed,
            -- a \boxed{ that no box pattern reads (nested over five deep, unclosed): no answer, not a licence to guess
            n_boxed > 0 AND box_m = '' AS box_bad,
            -- every \boxed{ is read when the outer boxes and the boxes inside them add up to n_boxed
            -- ('\boxed{\boxed{12}}' is one box; norm_latex unwraps the inner one)
            CASE WHEN n_boxed > 1
                 THEN COALESCE(list_sum(list_transform(all_boxes, lambda b: 1 + (length(b) - length(replace(b, '\boxed{', ''))) // 7)) = n_boxed
                               AND len(list_distinct(list_transform(all_boxes, lambda b: norm_answer(b)))) = 1, false)
                 ELSE false END AS boxes_agree
        FROM (
            SELECT *,
                CASE WHEN n_boxed = 1 OR n_boxed > 1 AND $multiple = 'reject' THEN regexp_extract(t, '\\boxed\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*\}', 0)
                     WHEN n_boxed > 1 THEN COALESCE(regexp_extract_all(t, '\\boxed\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*\}', 0)[-1], '') END AS box_m,
                CASE WHEN n_boxed > 1 THEN regexp_extract_all(t, '\\boxed\{((?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*)\}', 1) END AS all_boxes
            FROM (
                SELECT iteration, prompt_id, sample_idx, n_tok, t, tag_body IS NOT NULL AS has_tag, tag_body, n_tags, n_answers,
                    CASE WHEN $format_mode = 'think_answer' THEN think_ok
                         ELSE tag_body IS NOT NULL AND (n_answers = 1 OR $multiple = 'last') END AS format_ok,
                    CASE WHEN tag_body IS NULL AND contains(t, '\boxed{')
                         THEN (length(t) - length(replace(t, '\boxed{', ''))) // 7 ELSE 0 END AS n_boxed
                FROM tag_agree
            )
        )
    )
), contexts AS (
    -- alead, atrail: the text around the one tag or the one box (48 characters before it, 80 after it),
    -- read as the text around a last number is: words that deny it or ask about it, or offer another
    -- value after it ('$\boxed{12}$ is wrong', 'is it <answer>12</answer>?', '<answer>12</answer> or 13',
    -- macros.sql number_denied), and a sign, root, bound, power, scale or operation around it that changes
    -- its value ('about $\boxed{12}$', '$-\boxed{12}$', '$\frac{1}{\boxed{12}}$', '$x \geq \boxed{12}$',
    -- '$\boxed{12}^2$', '$\boxed{12}$ thousand', '$\boxed{12}\times 10^3$': value_prefix, value_suffix)
    -- span: in a text with no tag or box, the last math span ($...$, $$...$$, \(...\), \[...\]) when no
    -- digit follows it: the answer for a symbolic gold (joined below; 'The final answer is $2\sqrt{3}-1$. I
    -- hope it is correct.', Minerva's format, reads 2\sqrt{3}-1, not its last number 1), read in its
    -- context as a tag is; span_list: another span just before it, joined by 'or', ',', 'and', '\approx', a
    -- line break... ('$2\sqrt{3}$ or $3\sqrt{2}$': several values), or no answer cue before it (below)
    -- (the common cases cost little: a lead that ends a sentence, '... so we go back. <answer>', or that only
    -- names the answer, and a trail of spaces and full stops are read as no context, '')
    SELECT * EXCLUDE (mtail, mspan, rawlead, rlead, rl, rtrail),
        CASE WHEN rlead IS NULL THEN NULL
             WHEN rl = '' THEN ''
             -- (nested CASEs: each test runs only on the rows the one before leaves)
             -- (a full stop touching the answer is a decimal point, '3.<answer>12'; 'approx.', 'ca.' are abbreviations)
             WHEN right(rl, 1) IN ('.', '!', '?') AND rl <> rlead
                 THEN CASE WHEN regexp_matches(rl, abbrev() || '$') THEN ctx_lead(rlead) ELSE '' END
             -- a sentence that only names the answer ('So the answer is $', 'The final answer is', '**Answer:**'): one DFA
             -- test for what would otherwise take a dozen ('Approx. answer:' is an approximation)
             WHEN regexp_matches(rlead, '(?i)(?:^|[.!?\n])[\s*#]*(?:so|therefore|thus|hence)?,?\s*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*:?[\s*]*(?:\$|\\\(|\\\[)?\s*$')
                 THEN CASE WHEN regexp_matches(rlead, '(?i)approx|estimat') THEN ctx_lead(rlead) ELSE '' END
             ELSE ctx_lead(rlead) END AS alead,
        CASE WHEN rtrail IS NULL THEN NULL WHEN trim(rtrail, E' .$\n\t\r') = '' THEN '' ELSE ctx_trail(rtrail) END AS atrail,
        nullif(rtrim(trim(mspan.body), ' .,;'), '') AS span,  -- ('$$x = 2\sqrt{3}-1.$$': the sentence's full stop)
        CASE WHEN mspan IS NOT NULL
             THEN regexp_matches(rawlead, '(?i)(?:\$|\\[)\]])(?:\s|[,;./:]|\\text\s*\{\s*(?:or|and)\s*\}|\\q?quad|\\approx|≈|~|=|[–—|(]|\b(?:or|and|also|vs\.?|versus|to|maybe|perhaps|possibly|else|rather|either|alternatively|though|although|but|it|might|could|would|be)\b)*$')
                  -- no answer cue before it: a span given, tried or mentioned ('We are given $f(x) = x^2-4$.',
                  -- 'Substituting $x = ...$ gives a contradiction') is not stated as the answer
                  OR NOT regexp_matches(rawlead, '(?i)(?:^\s*|\n\s*|(?:\b(?:answer|result|solution|value|therefore|thus|hence|so|finally|get|gets|got|obtain|obtains|find|conclude|is|are|was|(?:must|will|would|shall)\s+be|have|has|at|equals?|becomes?|gives?|yields?|namely|simplifies\s+to|i\.e\.|that\s+is|length|area|volume|perimeter|distance|radius|height|width|sum|product|total|probability|ratio)\b|i\.e\.|=|:|,|\\therefore|\\implies|⇒|→)[\s,:*]*)$')
             END AS span_list
    FROM (SELECT *, rtrim(rlead) AS rl FROM (
    SELECT *,
        -- (a tag after a full stop, or at the start, has no lead; one at the end no trail: the common case, without
        -- splitting the text)
        CASE WHEN has_tag AND n_tags = 1
             THEN CASE WHEN starts_with(t, '<answer>') THEN ''
                       WHEN contains(t, '. <answer>') OR contains(t, E'.\n<answer>')
                           THEN CASE WHEN regexp_matches(t, abbrev() || '\s<answer>') THEN right(split_part(t, '<answer>', 1), 48) ELSE '' END
                       ELSE right(split_part(t, '<answer>', 1), 48) END
             WHEN box1 THEN right(split_part(t, '\boxed{', 1), 48)  -- (the one box: split, not counted in characters)
             WHEN mspan IS NOT NULL THEN rawlead END AS rlead,
        CASE WHEN has_tag AND n_tags = 1 THEN CASE WHEN ends_with(t, '</answer>') AND NOT t LIKE '%</answer>%</answer>' THEN '' ELSE left(split_part(t, '</answer>', 2), 80) END
             WHEN box1 THEN left(split_part(t, box_m, 2), 80)
             WHEN mspan IS NOT NULL THEN left(mspan.rest, 80) END AS rtrail
    FROM (
        SELECT *, CASE WHEN mtail <> '' THEN right(left(t, length(t) - length(mtail)), 48) END AS rawlead,
            CASE WHEN mtail <> '' THEN regexp_extract(mtail, '(?s)^(?:\$\$|\$|\\\(|\\\[)(.*?)(?:\$\$|\$|\\\)|\\\])(.*)$', ['body', 'rest']) END AS mspan
        FROM (
            SELECT *, NOT has_tag AND n_boxed = 1 AND box_m <> '' AS box1,
                CASE WHEN untagged AND (contains(t, '$') OR contains(t, '\(') OR contains(t, '\['))
                     -- (an end mark after it is no span: '$\blacksquare$', '$\checkmark$')
                     THEN regexp_extract(t, '(?s)(?:\$\$[^$]+\$\$|\$[^$]+\$|\\\((?:[^\\]|\\[^)])+\\\)|\\\[(?:[^\\]|\\[^\]])+\\\])(?:[^$\d\\]|\$\s*\\(?:blacksquare|square|checkmark|Box|qed)\s*\$)*$', 0) END AS mtail
            FROM hedges
        )
    )
    ))
), last_numbers AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, has_tag, format_ok, tag_body, boxed, hedge, last_num, lead, alead, atrail, span, span_list,
        -- the text after the last number, without the markup that closes it or \text{ around words
        ctx_trail(substr(tail, length(last_num) + 1)) AS trail,
        -- the number before the last one (within 48 characters), what joins them, and any operator
        -- in front of it ('6 + 7 = 13', '4 \times 3 = 12', '3 times 4 = 12', '12^2 = 144': an operand, and
        -- the last number is the value of the sum or product, not a second answer)
        CASE WHEN last_num IS NOT NULL AND regexp_matches(lead,  -- a cheap DFA pre-filter: a link macros.sql number_hedge may read
                  '(?i)\d[%}]?[\s$]*(?:[,;.—–-]?\s*[(\[]?\s*(?:\\(?:text\w*|mathrm|mbox)\s*\{\s*)?(?:but\s+|and\s+)?(?:or|maybe|perhaps|possibly|probably|could|might)\b\D*|↔|⇔|\\iff|\\leftrightarrow|\\q?quad|[a-z][).]|\[|[x⋅•−:]|\*\*|times|mod|out\s+of|\\lor|\\vee|∨|\\simeq|≃|\\cong|≅|\+/-|\+-|-/\+|\\approx|≈|~|\\sim|\\to|→|->|=>|⇒|\\implies|\\(?:long)?rightarrow|=|[-+*/×·÷^]|\\times|\\cdot|\\div|[,;]\s*(?:and\s+)?|\(|\||&|and/or|vs\.?|versus|nor|to|through|thru|and|–|—|±|\\pm|\\mp|\s)[\s$]*$')
             THEN regexp_extract(lead,
             '((?:[-+*/×·÷=^⋅•−:√xX]|\\(?:log|ln|lg)(?:_\s*\{?\d+\}?)?|\blog(?:_\d+)?|\\times|\\cdot|\\div|\\bmod|\\sqrt\s*\{|\btimes|\bmod|\bplus|\bminus|\bby|\bover|\bof)?)\s*[$€£]?\s*([-−]?\d+(?:,\d{3})*(?:\.\d*\\overline\{\d+\}|\.\d+)?(?:/\d+)?%?)(\D*)$', ['op', 'prev', 'link']) END AS before
    FROM (
        -- lead: the 48 characters before the last number, without the markup around numbers ('**12** or
        -- **13**', '\(12\) or \(13\)', `12`, '$12', 'about *12*', 'about \textbf{12}'): what number_hedge and
        -- number_denied read; trail, the same after it ('$12$ thousand', '**12** is wrong')
        SELECT *, CASE WHEN last_num IS NOT NULL THEN ctx_lead(right(left(t, length(t) - length(tail)), 48)) END AS lead
        FROM (
        -- (a LaTeX fraction is one number: 'The answer is $\frac{1}{2}$.' is 1/2, not 2)
        SELECT *, nullif(regexp_extract(tail, '^' || last_number_text(), 0), '') AS last_num
        FROM (
            SELECT *,
                -- the last number and the non-digits after it (group 0, see above; macros.sql; a unit's power,
                -- '12 cm^2', is no number)
                CASE WHEN untagged
                     THEN regexp_extract(t, last_number_text() || '(?:\D|(?:cm|mm|km|dm|m|ft|in|yd|mi|units?)\}?\s*\^\s*\{?[23]\}?|\\pmod\s*\{?\s*\d+\s*\}?|\(\s*mod\s*\d+\s*\))*$', 0) END AS tail
            FROM (
            -- an answer stated in words ('The answer is 21.', 'Answer: 21', '**Final answer:** $21$'), then a check of it
            -- ('The answer is 21.\n\nCheck: 21 ÷ 3 = 7 ✓', 'Answer: 7\nVerification: 7 × 3 = 21'): the last number is read from the
            -- text up to the end of the statement's sentence (stmt: the last statement with a number right after its
            -- cue and a check after its sentence, macros.sql stated_answer). Only a plain check is passed over: one with
            -- a word that hedges, denies or corrects, or states an answer again, leaves the whole text to be read
            -- (macros.sql only_check)
            -- A last number denied after the one before it ('12, not 13', 'He has 12 marbles (not 15).') leaves that one
            -- to be read, in its own context (macros.sql denied_last: 'not 12, not 13' denies both), and so does a
            -- computation in brackets after it (bracket_computation)
            -- (nested CASEs: only untagged rows, and only those with a cue, pay for the tests)
            SELECT * EXCLUDE (t, stmt),
                CASE WHEN NOT untagged THEN t
                     -- (a stated number that a scale word after it changes, 'The answer is 5 million.', is read as before)
                     WHEN stmt.text <> '' THEN CASE WHEN NOT stated_other(stmt.text) AND only_check(substr(t, length(stmt.text) + 1), stmt.num)
                                                    AND NOT value_suffix(lower(ctx_trail(stmt.after))) THEN stmt.text ELSE t END  -- (a check the
                     -- rule does not pass over is read as before: '12.\nCheck: 12 × 3 = 36, not 35' is not 36)
                     -- (not in a note after an answer stated before it: 'The answer is 18.\n\nNote: she sells 9 eggs, not 16.',
                     -- 'The sum is 15, where the largest term is 5 (not 6).')
                     WHEN (contains(t, 'not') OR contains(t, 'Not') OR contains(right(t, 4), ')'))
                          AND NOT regexp_matches(t, '(?is)(?:' || answer_cue() || '|\b(?:therefore|thus|hence|in\s+total|final))\b.*[.!?\n]\s+\S[^.!?\n]*[.!?)]*\s*$')
                          AND NOT regexp_matches(right(t, 100), '(?i)\b(?:note|remember|keep\s+in\s+mind|recall|where|mistake|common|i\.e|e\.g|since|because|given)\b[^.!?\n]*[.!?)]*\s*$')
                     THEN CASE WHEN regexp_matches(right(t, 40), '(?i)\bnot\s+[*$€£]*[-−]?\d') AND regexp_matches(t, denied_last())
                                    -- (not near a hedge: 'I think 12, but not sure, maybe not 13', 'Presumably 12, not 13')
                                    AND NOT regexp_matches(right(t, 60), '(?i)\b(?:but|and\s+[a-z]+\s+not|over|under|either|than|maybe|seems?|seemingly|suspect\w*|may|ish|appears?|believe|assum\w*|neither|is\s+it|looks?\s+like|roughly|about|around|approx\w*|perhaps|possibly|probably|presumably|likely|hopefully|sure|unless|if|or|might|could|though|although|alternatively|guess|think)\b')
                                   THEN list_transform([regexp_extract(t, denied_last(), ['head', 'num', 'den'])],
                                                       lambda m: CASE WHEN NOT num_same(m.num, m.den) THEN m.head ELSE t END)[1]
                               -- a computation in brackets after it that gives it ('The total is 36 (12 × 3).') explains it, as
                               -- '12 × 3 = 36' would
                               WHEN contains(right(t, 4), ')') AND regexp_matches(t, bracket_computation())
                                   THEN list_transform([regexp_extract(t, bracket_computation(), ['head', 'num', 'gap', 'a', 'wa', 'op', 'b', 'wb'])],
                                                       lambda m: CASE WHEN bracket_explains(m) THEN m.head ELSE t END)[1]
                               ELSE t END
                     ELSE t END AS t
            FROM (
                SELECT *, CASE WHEN NOT untagged THEN NULL
                               -- (a DFA test first, for a check after an answer: a capture group costs more)
                               WHEN (contains(t, 'nswer') OR contains(t, 'NSWER'))
                                    AND regexp_matches(t, '(?is)answer.*(?:check|verif|confirm|plugging|explanation|proof|justification)')
                               THEN regexp_extract(t, stated_answer(), ['text', 'num', 'after']) END AS stmt
                FROM (
                -- untagged: the last number is read (an unclosed <answer> is no answer, not a licence to guess);
                -- its text has the digits of other scripts as ASCII digits, as norm_answer reads a tag's
                -- ('12, but the answer is ١٣' ends in 13; one character for one, so lengths are kept)
                SELECT iteration, prompt_id, sample_idx, n_tok, has_tag, format_ok, tag_body, boxed, hedge, untagged, alead, atrail, span, span_list,
                    CASE WHEN untagged AND strlen(t) <> length(t) THEN norm_digits(t) ELSE t END AS t
                FROM contexts
                )
            )
            )
        )
        )
    )
), extractions AS (
    SELECT iteration, prompt_id, sample_idx, n_tok, has_tag, format_ok,
        COALESCE(CASE WHEN $multiple = 'reject' THEN hedge END,
                 CASE WHEN before.prev <> '' AND before.prev <> last_num
                           -- ('24/2 = 12': a division; 'answers: 12 and 13': a label's colon, no ratio)
                           AND number_hedge(CASE WHEN contains(before.prev, '/') THEN '/'
                                                 WHEN before.op = ':' AND regexp_matches(lead, '[A-Za-z]\s*:\s*[$€£]?\s*[-−]?\d+(?:,\d{3})*(?:\.\d+)?%?\D*$') THEN ''
                                                 ELSE before.op END,
                                            lower(replace(before.link, '$', '')), trail, lead)
                           -- a number that labels what follows is no candidate ('Question 3: 12', 'Step 2\n12')
                           AND NOT (regexp_matches(lead, '(?i)\b(?:question|step|part|problem|exercise|case|example|item|no\.?|number|#)\s*\d+\s*[:.)]?\s*$|(?:\b[a-z]+\.?|#)\s*\d+:\s+$')
                                    AND NOT regexp_matches(lead, '(?i)\banswers?\s*\d+:\s+$'))  -- ('Answer 1: 12 Answer 2: 13' is two)
                           -- a subscript is no candidate either ('$a_5 = 10$', '$x_1 + x_2 = 10$', '$v_0 = 10$')
                           AND NOT regexp_matches(lead, '_\s*\{?\s*\d+\s*\}?[^\d]*$')
                      -- (one value written twice is one answer: '3/4 or 0.75', '0.5, or 50%')
                      -- (an approximation, '1/3 \approx 0.333', is decided with the gold: approx below)
                      THEN CASE WHEN NOT num_same(before.prev, last_num) AND NOT regexp_full_match(before.link, approx_link())
                                THEN 'several values (' || before.prev || rtrim(before.link) || ' ' || last_num || ')' END END,
                 CASE WHEN last_num IS NOT NULL AND number_denied(lower(lead), trail)
                      THEN 'the last number, ' || last_num || ', is denied, a fallback, or only asked about' END,
                 CASE WHEN last_num IS NOT NULL AND (value_suffix(trail) OR value_prefix(lower(lead))
                           -- 'over 12 months', 'jumped over 12 hurdles': a word after it reads as prose, not a bound
                           -- (the prefix only: 'over 12 thousand' is still a scale)
                           AND NOT prose_bound(lead, trail))
                      THEN 'the value is not the last number, ' || last_num || ' (' || last_num || rtrim(left(trail, 10)) || ')' END,
                 -- the one tag or box, read in its context (contexts above)
                 CASE WHEN (has_tag OR boxed <> '') AND (alead <> '' OR atrail <> '') AND number_denied(lower(alead), atrail)
                      THEN answer_name(has_tag, tag_body, boxed) || ', is denied, a fallback, or only asked about' END,
                 -- a correction after it to another number ('\boxed{12}\n\nWait, 13.', 'Edit: $13$', '(typo, I meant 13)', 'it
                 -- should be 13', 'My mistake, it is 13 apples'): a cue that opens a clause, then the first number, ending a
                 -- clause or before a word; the same value is a check ('Wait, 12 is right.', '1/2' then 'Actually, that is
                 -- 0.5.'); a value either side cannot read (LaTeX, words) decides nothing; a number in passing ('In April
                 -- she actually sold 48.', 'No. of eggs sold = 9', 'using 4 boxes instead of 3') is no correction
                 CASE WHEN (has_tag OR boxed <> '') AND atrail <> '' AND regexp_matches(atrail, correction_cue())
                      -- (a lambda binds the correction once)
                      THEN list_transform([regexp_extract(atrail, correction_cue() || '[^\d]{0,24}?[$*]*([-−]?\d[\d,]*(?:\.\d+)?)[$*%]*(?:\s*$|\s*[.!;),]|\s+[A-Za-z])', 1)],
                                          lambda c: CASE WHEN c <> '' AND num_val(c) <> num_val(extracted)
                                                         THEN answer_name(has_tag, tag_body, boxed) || ', is corrected after it to ' || c END)[1] END,
                 CASE WHEN (has_tag OR boxed <> '') AND (alead <> '' OR atrail <> '')
                           AND (value_suffix(atrail) OR (value_prefix(lower(alead)) AND NOT prose_bound(alead, atrail) AND NOT (boxed <> '' AND box_sign(alead)))
                                OR (has_tag AND regexp_matches(alead, '[-−]$'))  -- a sign touching a tag ('-<answer>12'; a box's is read)
                                OR outer_operation(alead, atrail))
                      THEN 'the value is not ' || answer_name(has_tag, tag_body, boxed) || ' (' || ltrim(right(alead, 10)) || ' ... '
                           || rtrim(left(atrail, 10)) || ')' END) AS hedge,
        -- approx: an approximation before the answer ('about 28.27', '\pi \cdot 3^2 \approx 28.27', '\approx \boxed{28.27}':
        -- macros.sql approx_prefix), paid only for a gold that is a decimal with places (joined0)
        -- (the words before it, NULL for none)
        CASE WHEN last_num IS NOT NULL
                  AND (approx_prefix(lower(lead)) OR COALESCE(regexp_full_match(before.link, approx_link()), false))
                 THEN ltrim(right(lead, 16))
             WHEN (has_tag OR boxed <> '') AND alead <> '' AND approx_prefix(lower(alead)) THEN ltrim(right(alead, 16)) END AS approx,
        -- the last math span's, for a symbolic gold (joined below)
        CASE WHEN span IS NOT NULL
             THEN CASE WHEN span_list THEN 'several values or no answer stated (' || ltrim(right(alead, 20)) || ' ' || span || ')'
                       WHEN number_denied(lower(alead), atrail) OR regexp_matches(atrail, '^\s*\?')  -- ('Could it be $...$? Let me check.')
                           THEN 'the last $...$ answer, ' || span || ', is denied, a fallback, or only asked about'
                       WHEN value_suffix(atrail) OR value_prefix(lower(alead)) OR approx_prefix(lower(alead)) OR regexp_matches(alead, '[-−]$')
                           THEN 'the value is not the last $...$ answer, ' || span || ' (' || ltrim(right(alead, 10)) || ' ... '
                                || rtrim(left(atrail, 10)) || ')' END END AS span_hedge, span,
        CASE WHEN has_tag THEN 'answer_tag' WHEN boxed <> '' THEN 'boxed'
             WHEN last_num IS NOT NULL THEN 'last_number' ELSE 'none' END AS extraction,
        extracted
    FROM (
        SELECT *,
            CASE WHEN has_tag THEN tag_body
                 -- a minus touching the box is its sign ('$-\boxed{12}$' is -12; a bullet '- ' is no sign)
                 WHEN boxed <> '' THEN CASE WHEN box_sign(alead) THEN '-' || boxed ELSE boxed END
                 ELSE last_num END AS extracted
        FROM last_numbers
    )
), plain_flags AS (
    -- fast path: most answers are already a plain decimal ('42', '-3.5'); only the others are normalised
    SELECT extractions.*, plain_decimal(extracted) AS plain
    FROM extractions
), normalised AS (
    -- pred: the answer's text form (exact and symbolic comparisons); npred: the same read as a number,
    -- which is the one number of an answer in words ('The total is 19' -> '19', macros.sql word_num)
    SELECT *, CASE WHEN words <> '' THEN norm_answer(words) ELSE pred END AS npred
    FROM (
        SELECT plain_flags.*,
            CASE WHEN plain THEN extracted
                 -- only digits and , . $ € £ − - + %: norm_answer comes down to dropping the currency signs,
                 -- the unicode minus as '-', a leading '+' and a trailing '.' dropped (its own last step)
                 WHEN regexp_full_match(extracted, '[0-9,.$€£−+%-]+')
                     THEN regexp_replace(replace(replace(replace(replace(extracted, '$', ''), '€', ''), '£', ''), '−', '-'), '^\+|\.$', '', 'g')
                 -- a mixed number written with a space ('1 1/2') is 1\frac{1}{2} (num_rat: a proper fraction only)
                 WHEN regexp_full_match(extracted, '\s*[-−]?\d+\s+\d+/\d+\s*')
                     THEN regexp_replace(trim(replace(extracted, '−', '-')), '^(-?\d+)\s+(\d+)/(\d+)$', '\1\\frac{\2}{\3}')
                 ELSE norm_answer(extracted) END AS pred,
            -- ('50 percent' is read as 50%, which a word list would refuse)
            CASE WHEN NOT plain AND extraction <> 'last_number' AND regexp_matches(extracted, '[A-Za-z]')
                 THEN word_num(regexp_replace(extracted, '(\d)\s*(?:per\s*cent|percent)\b', '\1%', 'gi')) ELSE '' END AS words
        FROM plain_flags
    )
), bodies AS (
    SELECT normalised.*, NOT plain AND ends_with(npred, '%') AS pred_pct,
        -- '1.9e1' is 19 (written so: '1.9 e1' is no number, though norm_answer removed its space)
        CASE WHEN NOT plain THEN CASE WHEN regexp_matches(extracted, '\d[eE][-+]?\d') THEN sci_dec(num_body(npred))
                                      -- '1.2 × 10¹': the exponent in superscript digits
                                      WHEN regexp_full_match(npred, '-?\d+(?:\.\d+)?(?:\\times|\\cdot|×)10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}')
                                          THEN sci_dec(translate(regexp_replace(npred, '(?:\\times|\\cdot|×)10', 'e'), '⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹', '-+0123456789'))
                                      -- a repeating decimal in another notation ('0.\bar{3}', '0.(3)', '0.333...': macros.sql rep_notation)
                                      WHEN regexp_matches(npred, '\d\.\d*(?:\(\d+\)$|\\(?:bar|dot)|\.\.|…|\\[lc]?dots)') THEN rep_notation(npred)
                                      -- '1.9 \times 10^{1}', '6.02 \cdot 10^{23}': the same, in LaTeX
                                      WHEN contains(npred, '10^') AND regexp_full_match(npred, '-?\d+(?:\.\d+)?(?:\\times|\\cdot|×)10\^\{?[-+]?\d{1,3}\}?')
                                          THEN sci_dec(regexp_replace(npred, '^(-?\d+(?:\.\d+)?)(?:\\times|\\cdot|×)10\^\{?([-+]?\d{1,3})\}?$', '\1e\2'))
                                      ELSE num_body(npred) END END AS pred_body
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
                SELECT bodies.*, CASE WHEN NOT plain THEN num_value(pred_body) WHEN $tol > 0 THEN TRY_CAST(pred AS DOUBLE) END AS pred_num0,
                    CASE WHEN plain THEN pred
                         WHEN regexp_full_match(pred_body, '-?(?:\d+\.?\d*|\.\d+)') THEN pred_body END AS dec_s
                FROM bodies
            )
        )
    )
), joined0 AS (
    SELECT h.iteration, h.prompt_id, h.sample_idx, h.n_tok, h.has_tag, h.format_ok, h.extraction,
        h.extracted AS extracted0, h.pred AS pred0,
        -- sx0: a symbolic gold's answer, the last math span when the text has one (span, span_hedge:
        -- contexts above); joined reads it without words, Unicode math, units or an integer qualifier
        CASE WHEN p.gold_sym AND p.gold_num IS NULL THEN COALESCE(h.span, h.extracted) END AS sx0,
        h.npred, h.pred_pct, CASE WHEN isfinite(h.pred_num0) THEN h.pred_num0 END AS pred_num, h.pred_dec,
        CASE WHEN h.span IS NOT NULL AND p.gold_sym AND p.gold_num IS NULL THEN h.span_hedge
             WHEN h.hedge IS NOT NULL THEN h.hedge
             -- an approximation is an answer only to a rounded gold: a decimal with places ('28.27', not '12' or '\pi')
             WHEN h.approx IS NOT NULL AND NOT (NOT COALESCE(p.gold_int, true) AND contains(COALESCE(p.gold_tdec, ''), '.'))
                 THEN 'an approximation (' || h.approx || trim(h.extracted) || ')' END AS hedge,
        CASE WHEN h.plain THEN h.pred ELSE h.pred_body END AS pred_b,
        p.task, p.gold_num, p.answer_v AS answer, p.gold_v AS gold, p.gold_pct, p.gold_sym, p.gold_verdict, p.gold_formula,
        p.gold_n, p.gold_d, p.gold_int, p.gold_tdec, p.gold_texts, p.gold_body, p.gs,
        -- verify.extraction = 'strict' for this task: only a tag or a box is an answer
        p.strict AND h.extraction = 'last_number' AS unasked,
        -- a verdict negated by a tilde is no verdict ('~true'; norm_latex reads '~' as a LaTeX space)
        CASE WHEN p.gold_verdict IS NOT NULL AND NOT regexp_matches(h.extracted, '[~～∼˜]') THEN norm_verdict(h.pred) END AS pred_verdict,
        CASE WHEN p.task = 'logic' AND p.gold_verdict IS NULL THEN norm_formula(h.extracted) END AS pred_formula
    FROM decimals AS h JOIN golds AS p USING (prompt_id)
), joined AS (
    -- a symbolic answer is read in steps (macros.sql span_words, uni_math, value_tail: '<answer>The length is
    -- $2\sqrt{3}-1$.</answer>', '5√2', '36\pi \text{ cm}^2', ', k \in \mathbb{Z}'); units are dropped, not compared
    -- and a chain of '=' whose earlier sides compute the last is read as its last side (macros.sql eq_computed:
    -- '\sqrt{72} = 6\sqrt{2}', '(x-2)(x+2) = x^2-4', '\int_0^1 \frac{dx}{1+x^2} = \frac{\pi}{4}', '\sin 60^\circ =
    -- \frac{\sqrt{3}}{2}'); a chain of values ('2\sqrt{3} = 3\sqrt{2}') stays several values (not_value)
    SELECT * EXCLUDE (extracted0, pred0, sx0, sx1, sx2, sx3, sx),
        COALESCE(sx, extracted0) AS extracted,
        CASE WHEN sx IS NOT NULL AND sx <> extracted0 THEN norm_answer(sx) ELSE pred0 END AS pred
    FROM (SELECT *, CASE WHEN sx3 IS NOT NULL AND contains(sx3, '=') AND NOT contains(gold, '=') AND eq_computed(sx3)
                         THEN trim(regexp_extract(sx3, '[^=]*$', 0)) ELSE sx3 END AS sx
    FROM (SELECT *, CASE WHEN sx2 IS NOT NULL THEN value_tail(sx2) END AS sx3
          FROM (SELECT *, CASE WHEN sx1 IS NOT NULL THEN uni_math(sx1) END AS sx2
                FROM (SELECT *, CASE WHEN sx0 IS NOT NULL THEN span_words(sx0) END AS sx1 FROM joined0))))
), routed AS (
    SELECT *,
        CASE
            WHEN task = 'code' THEN 'code'  -- decided by running it: rlvr.verify.code, via verify_code.sql
            WHEN unasked THEN CASE WHEN gold_num IS NOT NULL THEN 'sql_numeric' ELSE 'sql_exact' END  -- wrong: no answer where one is required
            WHEN hedge IS NOT NULL THEN 'sql_exact'  -- several answers: wrong ($multiple = 'reject', or several final values)
            WHEN gold_verdict IS NOT NULL THEN 'sql_exact'  -- logic verdicts
            WHEN task = 'exact' THEN 'sql_exact'  -- datasets with verifier = 'exact': strings only, never read as numbers
            WHEN task = 'logic' THEN CASE WHEN COALESCE(pred_formula, '') IN ('', gold_formula) THEN 'sql_exact' ELSE 'logic' END
            -- a value gold takes a value: only a number SQL reads is an answer; an expression ('3*4',
            -- '\binom{10}{3}', '\sqrt{144}', '12=13'), even an equal one, is wrong here (issue 19)
            WHEN gold_num IS NOT NULL THEN 'sql_numeric'
            WHEN COALESCE(pred, '') = '' THEN 'sql_exact'
            WHEN NOT gold_sym THEN 'sql_exact'
            -- the same text, in lower case: paid only when the case agrees too ('\pi(r^2-R^2)' is not
            -- \pi(R^2-r^2); 'GmM' may be GMm: math-verify, which keeps case, decides the others)
            WHEN pred = gold AND norm_cased(extracted) = norm_cased(answer) THEN 'sql_exact'
            WHEN not_value IS NOT NULL THEN 'sql_exact'  -- wrong: see not_value
            ELSE 'undecided'
        END AS verifier
    FROM (
        -- not_value: why a symbolic answer is not an answer in the gold's shape: arithmetic that still
        -- needs evaluating, or several values (macros.sql unevaluated, hedged); a gold that is itself
        -- such an expression ('2^{10}', 'x \to 0') allows its own kind
        SELECT *, CASE WHEN gs IS NULL OR COALESCE(pred, '') = '' THEN NULL
                       -- a letter the gold has in the other case ('n^2+1' for N^2+1, '\Pi' for \pi): another
                       -- variable or constant, which the identical text (lower case) and math-verify both paid
                       WHEN case_clash(extracted, gs.letters, gs.lower_letters, gs.upper)
                           THEN 'a variable or constant in another case than the gold''s: ' || trim(extracted) || ' against ' || answer
                       -- a question mark: a guess put as a question ('2\sqrt{3}-1\text{?}'), no answer stated
                       WHEN contains(extracted, '?') THEN 'a question, not an answer'
                       -- degrees for a gold without them ('\frac{\pi}{6}^\circ' is not \frac{\pi}{6}; norm_answer drops them)
                       WHEN regexp_matches(extracted, '\^\s*\{?\s*\\circ|°') AND NOT gs.deg
                           THEN 'degrees, for a gold without them'
                       WHEN pred = gold THEN NULL
                       -- a set for a tuple or an interval, a bare list for either, or the reverse: math-verify
                       -- pays '\{0, 1\}' and '0, 1' for (0, 1)
                       WHEN gs.shape IN ('set', 'tuple') AND pshape NOT IN ('', gs.shape)
                            AND NOT (gs.shape = 'set' AND pshape = 'list')  -- '1, 2, 3' lists a set
                           THEN 'a ' || pshape || ' for a ' || gs.shape
                       WHEN gs.shape = 'tuple' AND pshape = 'tuple'  -- '[2, \infty]' is not [2, \infty)
                            AND (left(replace(strip_name(pred), '\left', ''), 1) <> gs.lb
                                 OR right(replace(pred, '\right', ''), 1) <> gs.rb)
                           THEN 'another interval: the brackets differ from the gold''s'
                       WHEN gs.shape = 'list' AND pshape = 'tuple'  -- '(1, 2)' is a pair or an interval, not 1 and 2
                           THEN 'a tuple for a list'
                       -- (a gold of several values, a list, a set or a union, may be written with 'or' and '=':
                       -- 'x = 1 \text{ or } x = 2' for 1, 2; math-verify decides those)
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
                       -- more values than the gold's form has, by more than one ('x^2+1+x-x'; macros.sql value_atoms;
                       -- a gold with \pm is two values)
                       WHEN value_atoms(norm_latex(named)) > gs.atoms_max
                           THEN 'written with more terms than the gold''s form (' || value_atoms(norm_latex(named))
                                || ' values against ' || gs.atoms || '): simplify it'
                       -- words in \text{} beside a symbolic answer ('2\sqrt{3} \text{ is wrong}', '... \text{ else }
                       -- 3\sqrt{2}'): math-verify skips them, so they could deny or hedge it unread
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
                       -- an approximation of a closed form: a decimal of three places or more ('3.464102' for
                       -- 2\sqrt{3}, 'x = 3.464102'; math-verify compares to 6 places); '(0.5, 3)' is exact
                       WHEN regexp_matches(pred, '\d\.\d{3}') AND NOT gs.dec
                           THEN 'a decimal approximation; the gold is exact'
                       -- more decimal places than the gold has ('(0.5000004, 3)' for (0.5, 3): math-verify rounds to 6)
                       WHEN gs.dec AND dec_places(pred) > gs.places
                           THEN 'a decimal approximation: more decimal places than the gold''s' END AS not_value
        FROM (
            -- named: the raw answer without a name in front (macros.sql strip_name); pshape: its set shape;
            -- each once per symbolic row
            SELECT *, CASE WHEN gs IS NOT NULL AND COALESCE(pred, '') <> '' THEN strip_name(extracted) END AS named,
                CASE WHEN gs IS NOT NULL AND COALESCE(pred, '') <> '' THEN set_shape(pred) END AS pshape
            FROM joined
        )
    )
), decided AS (
    SELECT *,
        CASE verifier
            WHEN 'undecided' THEN NULL
            WHEN 'code' THEN NULL
            WHEN 'logic' THEN NULL
            WHEN 'sql_numeric' THEN CASE  -- each branch runs on its own rows only
                WHEN unasked OR frac_open OR split_num THEN false
                -- a decimal answer against the gold's decimal text: exact, any length (the bare numbers:
                -- '50%' = '50'; a % on one side only also as x/100: '50%' = '0.5', the gold's point moved)
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
        -- frac_open: a fraction answer not in lowest terms ('24/2' for 12, '12/1', '14/16' for 7/8) is a
        -- division still to be done, not a value (issue 19: 'What is 24 / 2?' echoed); a gold written
        -- that way itself takes its own text
        SELECT *, CASE WHEN pred_rat IS NOT NULL AND (contains(pred_b, '/') OR contains(pred_b, 'frac'))
                            AND pred_b <> COALESCE(gold_body, '') AND (gcd(pred_rat.n, pred_rat.d) <> 1 OR pred_rat.d = 1)
                       THEN true ELSE false END AS frac_open,  -- (CASE: the HUGEINT gcd on the fraction rows only)
            -- split_num: digits split by spacing that is not thousands grouping ('1 2' for 12, '12 13' for
            -- 1213: macros.sql digit_gap) are several numbers, not one; a gold written that way takes its own kind
            CASE WHEN verifier = 'sql_numeric' AND NOT unasked AND digit_gap(extracted) AND NOT contains(pred_b, 'frac') THEN NOT digit_gap(answer)
                 ELSE false END AS split_num
        FROM (
        -- pred_rat: the answer as a fraction (macros.sql num_rat), only on the rows the texts leave open
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
        WHEN unasked THEN 'no_answer: no <answer> tag or \boxed{} (verify.extraction = strict for task ' || task
                          || '; the last number, ' || extracted || ', is not read as the answer)'
        WHEN extraction = 'none' THEN 'no_answer: no <answer> tag, \boxed{} or number in the response'
        WHEN hedge LIKE 'several values%' THEN 'wrong: ' || hedge || ' at the end of the response; one final answer is expected'
        WHEN hedge LIKE 'the value is not%' THEN 'wrong: ' || hedge || ': a sign or root in words before it, or a power, fraction, per mille or scale after it'
        WHEN hedge LIKE 'the last number,%' THEN 'wrong: ' || hedge || ' (''not 13'', ''13 is wrong'', ''is it 13?'', ''12 unless it is 13'', ''12 or thirteen''); no answer is stated'
        WHEN hedge LIKE '% is corrected after it to %' THEN 'wrong: ' || hedge || '; one final answer is expected'
        WHEN hedge LIKE 'an approximation%' THEN 'wrong: ' || hedge || ' of an exact gold; an approximation is an answer only to a gold that is a rounded decimal'
        WHEN hedge LIKE 'the % answer, %' THEN 'wrong: ' || hedge || ' (''\boxed{12} is wrong'', ''is it <answer>12</answer>?'', ''<answer>12</answer> or 13''); no answer is stated'
        WHEN hedge IS NOT NULL THEN 'wrong: ' || hedge || ' in one response; one answer is expected (verify.multiple_answers = reject)'
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
        WHEN verifier = 'sql_numeric' AND pred_num IS NULL AND looks_symbolic(npred)
            THEN 'wrong: got ' || npred || ', expected ' || gold || ' (not a number: the gold is a value, so an expression, '
                 || 'even an equal one, or several values is no answer)'
        WHEN verifier = 'sql_numeric' THEN 'wrong: got ' || npred || ', expected ' || gold
        ELSE 'wrong: got ' || pred || ', expected ' || gold
    END || CASE WHEN extraction IN ('boxed', 'last_number') AND NOT unasked
                THEN ' (no <answer> tag; taken from ' || extraction || ')' ELSE '' END AS reason,
    false AS verifier_error,
    n_tok,  -- response length, for verify_groups.sql's overlong shaping
    -- retrieval: filled by verify_citations.sql
    CAST(NULL AS INTEGER) AS citations,
    CAST(NULL AS INTEGER) AS citations_supported,
    CAST(NULL AS VARCHAR) AS citations_missing,
    -- only undecided rows carry what rlvr.verify.math needs: the raw gold and extracted texts
    CASE WHEN correct IS NULL THEN answer END AS undecided_gold,
    -- math-verify reads the answer without a name in front when the gold has none ('E_k = \frac{1}{2}mv^2')
    CASE WHEN correct IS NULL THEN CASE WHEN contains(gold, '=') THEN extracted ELSE strip_name(extracted) END END AS undecided_pred,
    CASE WHEN correct IS NULL THEN pred END AS pred_norm,
    CASE WHEN correct IS NULL THEN gold END AS gold_norm
FROM decided
