-- The answer contract (docs/verifiers.md, "The answer contract"): where a response marks its answer and which
-- forms a marker may hold; verify_markers.sql finds the markers, verify.sql reads their forms. One table per
-- rule: tests/unit/verify/test_contract.py (read through the verify pass) and tests/unit/verify/sql/test_markers.py
-- (each macro called directly).
-- box_pattern(): a \boxed{...} with braces nested up to five levels.
CREATE OR REPLACE MACRO box_pattern() AS
    '\\boxed\s*\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*\}';

-- marker_pattern(): every marker but the final-answer line, in order: an <answer> tag (a box inside it is the
-- tag's), a \boxed{}, a GSM8K '#### ...' line.
CREATE OR REPLACE MACRO marker_pattern() AS '(?s)<answer>.*?</answer>|' || box_pattern() || '|(?m:^)[ \t]*####[^\n]*';

-- marker_glued(t): a marker that is part of an expression, so its content is not the stated value: a digit,
-- point, sign, operator, bracket, relation or function command touches it from the left ('$-\boxed{12}$',
-- '$x \geq \boxed{12}$'). A bullet '- ' that opens a line is no sign; '<' and '>' are relations only after a
-- space ('</think>\boxed{12}' is no relation).
CREATE OR REPLACE MACRO marker_glued(t) AS regexp_matches(
    -- (the math openers \( \[ are no brackets; a box in a box is one box)
    CASE WHEN contains(t, '\boxed') AND strlen(t) - strlen(replace(t, '\boxed', '')) > 6  -- (two boxes at least)
         THEN regexp_replace(replace(replace(t, '\(', '$'), '\[', '$'), '(?:\\boxed\s*\{\s*)+\\boxed', '\\boxed', 'g')
         ELSE replace(replace(t, '\(', '$'), '\[', '$') END,
    '[-−\d.](?:\\boxed|<answer>)|[^\s][ \t]*[-−]\s*(?:\\boxed|<answer>)|\s[<>]\s*(?:\\boxed|<answer>)'
    || '|(?:[+/^|({_≤≥≠≈]|\\(?:approx|sim|simeq|[gl]eq?(?:slant)?|[gl]t|neq?|notin|pm|mp|log|ln|sqrt|[dt]?frac|cancelto|left|times|cdot'
    || '|div|sin|cos|tan|exp|lfloor|lceil)\b)\s*(?:\\boxed|<answer>)');
-- box_beside(b): b, a marker's content, holds a \boxed{} and more than that one box (math delimiters aside):
-- '\boxed{\boxed{1}\boxed{8}}' and '<answer>\boxed{1}8</answer>' are not 18. A box is a marker's whole content or no part of it.
CREATE OR REPLACE MACRO box_beside(b) AS
    contains(b, '\boxed') AND NOT regexp_full_match(b, '(?:\s|\$|\\[(\[])*' || box_pattern() || '(?:\s|[.$]|\\[)\]])*');
-- sign_off(): the sentence Minerva's and Llama-3's MATH prompts end an answer with ('... is $\boxed{18}$. I hope it
-- is correct.'); it states no value, so it may close the answer line.
CREATE OR REPLACE MACRO sign_off() AS '(?:\.?\s*I\s+hope\s+it\s+is\s+correct\.?)';
-- ends_answer(after): what follows the last marker closes it and says nothing more: whitespace, '.', '*', '$',
-- \) \], at most a % or a unit_word ('$\boxed{6}$ cm.', 'cm$^2$'), and at the very end the sign_off().
CREATE OR REPLACE MACRO ends_answer(after) AS list_transform(
    [regexp_extract(regexp_replace(regexp_replace(after, '(?i)' || sign_off() || '\s*$', ''), '^(?:\s|[*$]|\\[)\]])*', ''),
                    '^(?:\\?%|(?:\\(?:text|mathrm)\s*\{\s*)?([A-Za-z]+(?:\s+[A-Za-z]+)?)\s*\}?\s*' || unit_power() || ')?((?s:.*))$',
                    ['unit', 'rest'])],
    lambda ea: (ea.unit = '' OR unit_word(ea.unit)) AND regexp_full_match(ea.rest, '(?s)(?:\s|[.*$]|\\[)\]])*'))[1];

-- marker_kind(m), marker_body(m): a marker_pattern() match as its kind and its content.
CREATE OR REPLACE MACRO marker_kind(m) AS
    CASE WHEN starts_with(m, '<answer>') THEN 'answer_tag' WHEN starts_with(m, '\boxed') THEN 'boxed' ELSE 'gsm8k' END;
CREATE OR REPLACE MACRO marker_body(m) AS
    CASE WHEN starts_with(m, '<answer>') THEN substr(m, 9, length(m) - 17)
         WHEN starts_with(m, '\boxed') THEN regexp_extract(m, '(?s)^\\boxed\s*\{(.*)\}$', 1)
         ELSE trim(split_part(m, '####', 2)) END;

-- last_line(t): the last line that holds more than whitespace. (rtrim with a set costs more than the rest of
-- the pass; a text that ends in no whitespace, the common case, is split as it is.)
CREATE OR REPLACE MACRO last_line(t) AS CASE
    WHEN suffix(t, ' ') OR suffix(t, chr(9)) OR suffix(t, chr(10)) OR suffix(t, chr(11)) OR suffix(t, chr(12)) OR suffix(t, chr(13))
    THEN string_split(rtrim(t, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)), chr(10))[-1]
    ELSE string_split(t, chr(10))[-1] END;

-- final_answer(t): the content of the last non-empty line when it opens with 'The final answer is', 'Final
-- Answer:' or 'Answer:' (markdown allowed; a sign_off() after it dropped); '' when it does not.
CREATE OR REPLACE MACRO final_answer(t) AS list_transform([last_line(t)], lambda fa_line:
    CASE WHEN NOT regexp_matches(fa_line, '(?i)^[\s>#*_]*(?:the\s+final|final|answer)')
         THEN ''  -- (the opening of the pattern below, anchored: most lines fail it at once)
         WHEN NOT contains(lower(fa_line), 'answer') THEN '' ELSE regexp_extract(fa_line,
    '(?i)^[\s>#*_]*(?:the\s+final\s+answer\s+is|final\s+answer\s*[*_]*\s*:|answer\s*[*_]*\s*:)[\s*_]*:?[\s*_]*'
    || '(?:the\s+final\s+answer\s+is\s*:?)?\s*(.*?)' || sign_off() || '?[\s.*_]*$', 1) END)[1];

-- lenient_number(t): verify.extraction = 'lenient' with no marker: the last line's number, when no other digit
-- is on the line and only punctuation or a unit_word follows; '' otherwise ('3 * 6 = 18', '18 or 19').
CREATE OR REPLACE MACRO lenient_number(t) AS list_transform(
    [regexp_extract(last_line(t),
                    '^[^\d]*?([-−]?[$€£]?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?%?)[\s*]*([A-Za-z]*)[\s.!,;:*)$]*$', ['num', 'unit'])],
    lambda ln: CASE WHEN ln.unit = '' OR unit_word(ln.unit) THEN ln.num ELSE '' END)[1];

-- value_unit(c): a value with a unit_word ('18 cm', '18\text{ cm}', '18 cm$^2$') as the value; a currency sign or a % stays
-- with the number. c as it is otherwise.
CREATE OR REPLACE MACRO value_unit(c) AS list_transform(
    [regexp_extract(c, '^\s*([^\s~\\]*\d[^\s~\\]*?)\s*(?:~|\\[,;:! ])*\s*(?:\\(?:text|mathrm|mbox)\s*\{\s*)?'
                       || '([A-Za-z]+(?:\s+[A-Za-z]+)?\.?)\s*\}?\s*' || unit_power() || '\s*\.?\s*$', ['num', 'unit'])],
    lambda vu: CASE WHEN vu.unit <> '' AND unit_word(vu.unit) THEN vu.num ELSE c END)[1];
-- unit_num(s): a gold with a unit ('5\text{ cm}', '30 cm') as its number; '' when it has none.
CREATE OR REPLACE MACRO unit_num(s) AS CASE WHEN value_unit(s) <> s THEN value_unit(s) ELSE '' END;

-- mark_norm(b): norm_answer of a marker's content b, by norm_plain when b holds digits and signs only (the
-- common case); mark_value(b): its answer as markers are compared, a listed unit dropped (value_unit, which
-- changes only a text with a letter).
CREATE OR REPLACE MACRO mark_norm(b) AS CASE WHEN regexp_full_match(b, '[0-9,./%+$€£−-]*') THEN norm_plain(b) ELSE norm_answer(b) END;
CREATE OR REPLACE MACRO mark_value(b) AS CASE WHEN regexp_matches(b, '[A-Za-z]') THEN norm_answer(value_unit(b)) ELSE mark_norm(b) END;

-- arith_value(s): the value of a side that is a number, a sum or difference, a product or one division of
-- numbers; NULL for anything else (mixed operations are not evaluated), which then proves nothing.
CREATE OR REPLACE MACRO arith_ops(s) AS regexp_replace(replace(replace(replace(translate(s, '×·÷−⋅', '**/-*'),
    '\times', '*'), '\cdot', '*'), '\div', '/'), '\s|\$|\\[,;:! ]|(\d),(\d{3})', '\1\2', 'g');
CREATE OR REPLACE MACRO arith_value(s) AS list_transform([arith_ops(s)], lambda ax: CASE
    WHEN regexp_full_match(ax, '-?\d+(?:\.\d+)?') THEN CAST(ax AS DOUBLE)
    WHEN regexp_full_match(ax, '-?\d+(?:\.\d+)?(?:[-+]\d+(?:\.\d+)?)+')
        THEN list_sum(list_transform(regexp_extract_all(ax, '[-+]?\d+(?:\.\d+)?'), lambda av: CAST(av AS DOUBLE)))
    WHEN regexp_full_match(ax, '-?\d+(?:\.\d+)?(?:\*-?\d+(?:\.\d+)?)+')
        THEN list_reduce(list_transform(string_split(ax, '*'), lambda av: CAST(av AS DOUBLE)), lambda pa, pb: pa * pb)
    WHEN regexp_full_match(ax, '-?\d+(?:\.\d+)?/-?\d+(?:\.\d+)?')
        THEN CAST(split_part(ax, '/', 1) AS DOUBLE) / nullif(CAST(split_part(ax, '/', 2) AS DOUBLE), 0) END)[1];

-- eq_last(c): the last side of an equation when every earlier side is a name (strip_name) or arithmetic whose
-- value is the last side's ('x = 3 \cdot 4 = 12' reads 12); NULL when a side does not hold ('4 \times 3 = 13').
CREATE OR REPLACE MACRO eq_last(c) AS list_transform([string_split(c, '=')], lambda es:
    CASE WHEN list_bool_and(list_transform(es[1:-2], lambda side: strip_name(side || '=') = ''
                  OR COALESCE(abs(arith_value(side) - arith_value(es[-1])) <= 1e-9 * greatest(1.0, abs(arith_value(es[-1]))), false)))
         THEN trim(es[-1]) END)[1];

-- form_refused(c): why c, inside a marker for a value gold, is no value: the form it has.
CREATE OR REPLACE MACRO form_refused(c) AS CASE
    WHEN regexp_matches(regexp_replace(c, '\\[A-Za-z]+', ' ', 'g'), '[A-Za-z]{2,}') THEN 'words inside the marker'
    WHEN contains(c, '=') THEN 'an equation whose earlier sides do not give its last side'
    WHEN regexp_matches(c, '\d\s*[,;]\s*[-−]?\d') THEN 'several values inside the marker'
    WHEN regexp_matches(c, '\\pm|±|\\approx|≈|~|\\to|→') THEN 'several values inside the marker'
    WHEN regexp_matches(c, '\\[A-Za-z]+|[-+*/^×·÷!]') THEN 'an expression to evaluate, not a value'
    ELSE 'not a value the contract reads' END;

-- think_answer_ok(t): <think>...</think> then <answer>...</answer> and nothing else, each tag once
-- (verify.format = 'think_answer'; DeepSeek-R1's format reward, Guo et al. 2025, sec. 2.2.2).
CREATE OR REPLACE MACRO think_answer_ok(t) AS
    regexp_full_match(t, '(?s)\s*<think>.*</think>\s*<answer>.*</answer>\s*')
    AND length(t) - length(replace(t, '<think>', '')) = 7
    AND length(t) - length(replace(t, '</think>', '')) = 8
    AND length(t) - length(replace(t, '<answer>', '')) = 8
    AND length(t) - length(replace(t, '</answer>', '')) = 9;
