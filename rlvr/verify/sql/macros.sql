-- Answer normalisation shared by every verifier query (run once per connection by rlvr.verify.connect).
-- Every rule has true and false rows in tests/test_verify.py.
--
-- norm_answer(s): the comparable text form of an answer.
--   lower-case; every whitespace character removed ("case/whitespace-insensitive": ' Paris ' = 'paris',
--   'New York' = 'newyork'); \text{..}, \textbf{..}, \mathrm{..}, \mbox{..} unwrapped; unicode minus
--   U+2212 -> '-'; currency signs $ € £ and LaTeX \$ dropped; LaTeX \% -> %; then a leading '+' and
--   a trailing '.' dropped: '19.' -> '19', '$1,200' -> '1,200', ' −3 ' -> '-3', '+4' -> '4'.
--   Commas are kept here: only num_value() reads them, and only as thousands separators.
CREATE OR REPLACE MACRO norm_answer(s) AS
    regexp_replace(
        replace(
            replace(
                regexp_replace(lower(s), '\s+|\\?[$€£]|\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}', '\1', 'g'),
                '−', '-'),
            '\%', '%'),
        '^\+|\.$', '', 'g');

-- num_body(n): n (normalised) without a trailing '%' and, when every comma sits in a well-formed
-- thousands group ('1,234,567.5'), without its commas. '1,2' and '12,34' keep theirs (a list, a
-- decimal comma: not decided here), so they are not numbers.
CREATE OR REPLACE MACRO num_body(n) AS
    CASE WHEN contains(n, ',') AND regexp_full_match(n, '-?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?')
         THEN replace(rtrim(n, '%'), ',', '')
         ELSE rtrim(n, '%') END;

-- num_value(b): the value of a number body, or NULL when it is not a plain number:
--   decimals with optional exponent ('2.50', '.5', '1e3'), fractions of integers ('3/4', '-1/2') and
--   LaTeX fractions of integers ('\frac{3}{4}', '-\dfrac{1}{2}'); a zero denominator is not a number.
--   TRY_CAST also reads 'inf', 'nan' (callers keep isfinite values only) and '1_000' (refused here),
--   and nothing else that is not a decimal (DuckDB 2.0; the rows in tests/test_verify.py check it).
CREATE OR REPLACE MACRO num_value(b) AS
    COALESCE(
        TRY_CAST(CASE WHEN NOT contains(b, '_') THEN b END AS DOUBLE),
        CASE
            WHEN contains(b, '/') AND regexp_full_match(b, '-?\d+/0*[1-9]\d*')
                THEN TRY_CAST(split_part(b, '/', 1) AS DOUBLE) / TRY_CAST(split_part(b, '/', 2) AS DOUBLE)
            WHEN contains(b, 'frac') AND regexp_full_match(b, '-?\\[dt]?frac\{\d+\}\{0*[1-9]\d*\}')
                THEN TRY_CAST(regexp_extract(b, '(-?)\\', 1) || regexp_extract(b, '\{(\d+)\}\{', 1) AS DOUBLE)
                     / TRY_CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS DOUBLE)
        END);

-- looks_symbolic(n): n (normalised) needs a symbolic checker: LaTeX commands or braces, powers,
-- sub-scripts, brackets (intervals, tuples), relations, operators after a digit, sqrt/pi/infinity,
-- a digit beside a letter ('2x'), or a list of numbers ('1,2'). Plain words ('paris') are not.
CREATE OR REPLACE MACRO looks_symbolic(n) AS
    regexp_matches(n, '[\\^{}_()\[\]=<>*/|!]|sqrt|pi|inf|[0-9][a-z]|[a-z][0-9]|[0-9.][+-]|[0-9],[0-9]');

-- num_close(a, b, tol): a is within tol of the gold b, relative above |b| = 1, absolute below:
-- |a - b| <= tol * max(1, |b|) (config verify.numeric_tolerance).
CREATE OR REPLACE MACRO num_close(a, b, tol) AS abs(a - b) <= tol * greatest(1.0, abs(b));

-- norm_ws(s): lower case, runs of whitespace -> one space, trimmed: how retrieval compares cited
-- spans, sources and answers (verify_citations.sql).
CREATE OR REPLACE MACRO norm_ws(s) AS trim(regexp_replace(lower(s), '\s+', ' ', 'g'));

-- think_answer_ok(t): the response is <think>...</think> then <answer>...</answer> and nothing else
-- (whitespace aside), each tag exactly once (verify.format = 'think_answer'; DeepSeek-R1's format
-- reward, Guo et al. 2025, sec. 2.2.2).
CREATE OR REPLACE MACRO think_answer_ok(t) AS
    regexp_full_match(t, '(?s)\s*<think>.*</think>\s*<answer>.*</answer>\s*')
    AND length(t) - length(replace(t, '<think>', '')) = 7
    AND length(t) - length(replace(t, '</think>', '')) = 8
    AND length(t) - length(replace(t, '<answer>', '')) = 8
    AND length(t) - length(replace(t, '</answer>', '')) = 9;

-- norm_verdict(n): a logic verdict, created by rlvr.verify.connect from rlvr.logic.VERDICT_PAIRS
-- (one table for SQL and Python): n (norm_answer's output) trimmed of rlvr.logic.VERDICT_STRIP and
-- looked up; NULL when it is not a verdict ('maybe').

-- norm_formula(s): a propositional formula with ASCII operators mapped to the unicode ones and the
-- whitespace removed ('P & ~Q -> R' = 'P∧¬Q→R'). SQL only decides formulas identical to the gold
-- one this way; every other answer goes to rlvr.logic (parsed, checked by truth table).
CREATE OR REPLACE MACRO norm_formula(s) AS
    replace(replace(replace(replace(replace(replace(replace(replace(
        regexp_replace(s, '\s+', '', 'g'),
        '<->', '↔'), '<=>', '↔'), '->', '→'), '=>', '→'), '&', '∧'), '|', '∨'), '~', '¬'), '!', '¬');
