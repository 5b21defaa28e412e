-- Answer normalisation shared by every verifier query (run once per connection by rlvr.verify.connect).
-- Every rule has true and false rows in tests/test_verify.py.
--
-- norm_answer(s): the comparable text form of an answer.
--   any Unicode decimal digit read as its ASCII digit and fullwidth ASCII as ASCII (norm_digits, made
--   by rlvr.verify.scoring.digits_macro from Python's unicodedata: '٤٢' = '４２' = '42'); lower-case; every whitespace character removed ("case/whitespace-insensitive": ' Paris ' = 'paris',
--   'New York' = 'newyork'); \text{..}, \textbf{..}, \mathrm{..}, \mbox{..} unwrapped; unicode minus
--   U+2212 -> '-'; currency signs $ € £ and LaTeX \$ dropped; LaTeX \% -> %; then a leading '+' and
--   a trailing '.' dropped: '19.' -> '19', '$1,200' -> '1,200', ' −3 ' -> '-3', '+4' -> '4'.
--   Commas are kept here: only num_value() reads them, and only as thousands separators.
CREATE OR REPLACE MACRO norm_answer(s) AS
    regexp_replace(
        replace(
            replace(
                regexp_replace(lower(norm_digits(s)), '\s+|\\?[$€£]|\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}', '\1', 'g'),
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

-- dec_canon(b): a plain decimal body ('-0042.50', '.5', '7.') in one canonical text form ('-42.5',
-- '0.5', '7'; '-0' -> '0'), NULL for anything else. Compared as text, so equality is exact at any
-- length: a 200-digit gold and an answer one digit off differ (as DOUBLEs they would be equal).
-- dec_parts(neg, ip, fp): the canonical text of a decimal from its sign, integer and fraction digits
-- (each part named once per use: macros are inlined, so callers pass columns, not expressions).
CREATE OR REPLACE MACRO dec_parts(neg, ip, fp) AS
    CASE WHEN neg AND (ltrim(ip, '0') <> '' OR rtrim(fp, '0') <> '') THEN '-' ELSE '' END
    || COALESCE(NULLIF(ltrim(ip, '0'), ''), '0')
    || CASE WHEN rtrim(fp, '0') <> '' THEN '.' || rtrim(fp, '0') ELSE '' END;
CREATE OR REPLACE MACRO dec_canon(b) AS
    CASE WHEN regexp_full_match(b, '-?(?:\d+\.?\d*|\.\d+)')
         THEN dec_parts(starts_with(b, '-'), split_part(ltrim(b, '-'), '.', 1), split_part(b, '.', 2)) END;

-- num_rat(b): a number body as an exact fraction {n, d} (HUGEINT, d > 0) when it is a decimal of at
-- most 17 characters, an integer fraction a/b or \frac{a}{b} of at most 17 digits each; NULL else.
-- rat_eq(a, b): a = b by cross-multiplication, exact: every product stays below 10^36 < 2^127.
-- A percent reading divides by 100 (d * 100), still below 10^38.
CREATE OR REPLACE MACRO num_rat(b) AS
    CASE
        WHEN length(b) <= 17 AND regexp_full_match(b, '-?(?:\d+\.?\d*|\.\d+)')
            THEN {'n': CAST(replace(b, '.', '') AS HUGEINT),
                  'd': CAST(rpad('1', CAST(1 + length(split_part(b, '.', 2)) AS INTEGER), '0') AS HUGEINT)}
        WHEN contains(b, '/') AND regexp_full_match(b, '-?\d{1,17}/0*[1-9]\d{0,16}')
            THEN {'n': CAST(split_part(b, '/', 1) AS HUGEINT), 'd': CAST(split_part(b, '/', 2) AS HUGEINT)}
        WHEN contains(b, 'frac') AND regexp_full_match(b, '-?\\[dt]?frac\{\d{1,17}\}\{0*[1-9]\d{0,16}\}')
            THEN {'n': CAST(regexp_extract(b, '(-?)\\', 1) || regexp_extract(b, '\{(\d+)\}\{', 1) AS HUGEINT),
                  'd': CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS HUGEINT)}
    END;
CREATE OR REPLACE MACRO rat_pct(r, pct) AS CASE WHEN pct THEN {'n': r.n, 'd': r.d * 100} ELSE r END;
CREATE OR REPLACE MACRO rat_eq(a, b) AS a.n * b.d = b.n * a.d;

-- not_a_number(n): NaN and infinities, which are never a correct answer (NaN = NaN as text).
CREATE OR REPLACE MACRO not_a_number(n) AS regexp_full_match(n, '[-+]?(?:nan|inf|infinity|∞)');

-- looks_symbolic(n): n (normalised) needs a symbolic checker: LaTeX commands or braces, powers,
-- sub-scripts, brackets (intervals, tuples), relations, operators after a digit, sqrt/pi/infinity,
-- a digit beside a letter ('2x'), or a list of numbers ('1,2'). Plain words ('paris') are not.
CREATE OR REPLACE MACRO looks_symbolic(n) AS
    regexp_matches(n, '[\\^{}_()\[\]=<>*/|!]|sqrt|pi|inf|[0-9][a-z]|[a-z][0-9]|[0-9.][+-]|[0-9],[0-9]');

-- num_close(a, b, tol): a is within tol of the gold b, relative above |b| = 1, absolute below:
-- |a - b| <= tol * max(1, |b|) (config verify.numeric_tolerance; default 0, and verify.sql applies
-- it only to golds that are not integers: exactness is decided by dec_canon / num_rat).
CREATE OR REPLACE MACRO num_close(a, b, tol) AS abs(a - b) <= tol * greatest(1.0, abs(b));

-- norm_ws(s): lower case, runs of whitespace -> one space, trimmed: how retrieval compares cited
-- spans, sources and answers (verify_citations.sql).
CREATE OR REPLACE MACRO norm_ws(s) AS trim(regexp_replace(lower(s), '\s+', ' ', 'g'));

-- cite_words(s): s as its words (runs of letters, digits and '_'; anything else separates), one space
-- between them and one at each end, so that contains(cite_words(a), cite_words(b)) holds only at word
-- boundaries ('29' is not in '1829'): retrieval's citation checks (verify_citations.sql).
CREATE OR REPLACE MACRO cite_words(s) AS ' ' || trim(regexp_replace(s, '[^\p{L}\p{N}_]+', ' ', 'g')) || ' ';

-- cite_sentences(s): source s as its sentences, each norm_ws'd, in order: retrieval's citation unit
-- (verify_citations.sql). A sentence ends at a run of . ! ? (with any closing quotes or brackets after
-- it) followed by whitespace and then anything but a lower-case letter ('why?" he asked' goes on), at
-- a run of 。！？ (no space needed), or at a blank line. A full stop is not an end after a single letter
-- (initials, e.g., i.e.) or after a title or abbreviation of cite_abbrev; one not followed by
-- whitespace never is (3.5, www.x.org).
-- Doubts: 'at 5 p.m. The', 'in the U.S. It', 'He said no. Then' and a source written in lower case
-- ('it closed. then it') are read as one sentence. Marks: chr(31) holds a full stop that ends nothing,
-- chr(30) a sentence end. Tests: tests/test_verify_tasks.py (by hand, and every shipped passage).
CREATE OR REPLACE MACRO cite_abbrev(s) AS regexp_replace(s,
    '(^|[^\p{L}\p{N}_])(\p{L}|mr|mrs|ms|messrs|dr|prof|st|mt|ft|jr|sr|rev|fr|gen|col|capt|cmdr|lt|sgt|gov|sen|rep|'
    || 'hon|no|nos|vol|fig|pp|approx|ca|cf|vs|inc|ltd|co|corp|bros|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.',
    '\1\2' || chr(31), 'gi');
CREATE OR REPLACE MACRO cite_sentences(s) AS list_filter(list_transform(string_split(replace(regexp_replace(
    cite_abbrev(cite_abbrev(regexp_replace(s, '\n\s*\n', chr(30), 'g'))),  -- twice: 'e.g.' is two matches
    '([.!?]+["''”’»)\]]*)\s+([^\p{Ll}])|([。！？]+[”’」』）]*)', '\1\3' || chr(30) || '\2', 'g'), chr(31), '.'), chr(30)),
    lambda x: norm_ws(x)), lambda x: x <> '');

-- cite_trim(s): s without the marks a sentence may start or end with (. ! ? quotes, brackets,
-- spaces): a quote of a whole sentence may leave them out (verify_citations.sql).
CREATE OR REPLACE MACRO cite_trim(s) AS trim(s, ' .!?"''“”‘’«»()[]。！？「」『』（）');

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
