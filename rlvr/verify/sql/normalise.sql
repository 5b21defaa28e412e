-- Normalisation: an answer's comparable text (norm_answer) and its exact value as a number (num_value,
-- dec_canon, num_rat ...). Loaded by rlvr.verify.connect before markers.sql; verify.sql uses them.
-- Tests: tests/unit/verify/test_verify.py (rule rows), tests/unit/verify/test_verify_exact.py (against Python fractions).

-- Answer normalisation shared by every verifier query (run once per connection by rlvr.verify.connect).
-- Every rule has true and false rows in tests/unit/verify/test_verify.py.
--
-- norm_latex(s): \text{..}, \textbf{..}, \textrm{..}, \mathrm{..}, \mbox{..} replaced by their contents,
-- a space each side, and \frac12 spelled \frac{1}{2}; a pass of its own, before whitespace is
-- removed (run in the same pass, the contents' own spaces survived it: '5\text{ cm}' was '5 cm',
-- never equal to '5cm'). A \boxed{..} inside the tag (up to five levels of braces) is
-- its contents, and so is a box inside that box (two passes: '\boxed{\boxed{12}}' is 12); the math
-- delimiters \( \) \[ \] are dropped: '<answer>\boxed{12}</answer>' and '\(12\)' are 12. An answer that is all markdown bold or code ('**12**', '`12`')
-- is its contents,
-- and so is one wrapped whole in *, __, quotes or brackets, or in parentheses or braces without a comma
-- ('*19*', '"19"', '[19]', '(19)', '{19}'; '(0, 1)' stays
-- an interval); \left, \right and \displaystyle are dropped; \textit, \mathbf and their kin are unwrapped like \text ('\mathbf{19}'). A '~' before a
-- word is a space ('12~\text{cm}'; '~13' stays an approximation); \varnothing and ∅ are \emptyset, and
-- \varepsilon, \varphi, \vartheta, \varpi the letters they vary.
CREATE OR REPLACE MACRO norm_latex(s) AS  -- s once: macros are inlined, and nested ones multiply (planning time)
    replace(replace(replace(replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
        regexp_replace(s, '~(\s*(?:\\text|[A-Za-z]))|\\(?:left|right)\b|\\(?:display|text)style\b', ' \1', 'g'),
        '\\boxed\s*\{((?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*)\}', '\1', 'g'),
        '\\boxed\s*\{((?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\})*\})*)\}', '\1', 'g'),
        '\\(?:text|textbf|textit|textrm|textsf|mathrm|mathbf|mathit|mathsf|mbox|boldsymbol|bm)\s*\{((?:[^{}]|\{[^{}]*\})*)\}|\\[()\[\]]', ' \1 ', 'g'),
        '(\\[dt]?frac)\s*(\d)\s*(\d)', '\1{\2}{\3}', 'g'),
        '(?s)^\s*(?:\*\*([^*]+)\*\*|`([^`]+)`|\(([^(),]*)\)|\{([^{},]*)\}|\*([^*]+)\*|__([^_]+)__|"([^"]+)"|\[([^\[\],]*)\])\s*$',
        '\1\2\3\4\5\6\7\8'), '\\varnothing|∅', '\\emptyset', 'g'),
        '\varepsilon', '\epsilon'), '\varphi', '\phi'), '\vartheta', '\theta'), '\varpi', '\pi');

-- norm_answer(s): the comparable text form of an answer.
--   any Unicode decimal digit read as its ASCII digit and fullwidth ASCII as ASCII (norm_digits, made
--   by rlvr.verify.scoring.digits_macro from Python's unicodedata: '٤٢' = '４２' = '42'); \text{..} and
--   its kin unwrapped and \frac12 braced (norm_latex); lower-case; then every whitespace character removed
--   ("case/whitespace-insensitive": ' Paris ' = 'paris', 'New York' = '\text{New York}' = 'newyork');
-- degrees (^\circ, ^{\circ}, °) and LaTeX spaces (\, \! \; \:) dropped, '{,}' read as ',' ('10{,}000'); unicode minus U+2212 -> '-'; currency signs $ €
-- £ and LaTeX
--   \$ dropped (and ¥ ₹); LaTeX \% -> %; then a leading '+', '=' or ':' and a trailing '.' or ',' dropped:
--   '19.' -> '19', '$1,200' -> '1,200', ' −3 ' -> '-3', '+4' -> '4', '60^\circ' -> '60'.
--   Commas are kept here: only num_value() reads them, and only as thousands separators.
-- norm_cased(s): the same with the case kept (verify.sql: an answer identical to a symbolic gold but for
-- the case of its letters, '\pi(r^2-R^2)' for \pi(R^2-r^2), goes to math-verify, which keeps case).
-- Both read a minus in front of a fraction's numerator as in front of the fraction ('\frac{-3}{4}').
CREATE OR REPLACE MACRO norm_cased(s) AS
    regexp_replace(regexp_replace(
        replace(
            replace(
                regexp_replace(norm_latex(norm_digits(s)), '\s+|\\?[$€£¥₹]|\^\{?\\circ\}?|°|\\[,!;: ]|\{(,)\}', '\1', 'g'),
                '−', '-'),
            '\%', '%'),
        '^[+=:]|[.,]$', '', 'g'), '^\\([dtc]?frac)\{-', '-\\\1{');
CREATE OR REPLACE MACRO norm_answer(s) AS lower(norm_cased(s));
-- norm_plain(s): norm_answer of a text of digits and , . / % + - − $ € £ only, by the steps that act on it:
-- the currency signs dropped, '−' as '-', a leading '+' and a trailing '.' or ',' dropped.
CREATE OR REPLACE MACRO norm_plain(s) AS
    regexp_replace(replace(replace(replace(replace(s, '$', ''), '€', ''), '£', ''), '−', '-'), '^\+|[.,]$', '', 'g');

-- plain_decimal(s): s is a plain decimal ('42', '-3.5', '007'): digits, an optional '-' and one point
-- with digits after it; norm_answer leaves such a text as it is, so a gold or an answer in this form
-- skips normalisation (verify.sql: the golds' and the answers' fast path, one pattern for both).
CREATE OR REPLACE MACRO plain_decimal(s) AS regexp_full_match(s, '-?\d+(?:\.\d+)?');

-- digit_gap(x): x splits digits by spacing (whitespace, LaTeX \, \; \: \! '\ ' or ~) other than
-- thousands grouping, so it holds several numbers where norm_answer, which removes spacing, would
-- read one: '1 2' is not 12, '12 13' not 1213, '10 00' and '1 0 0 0' not 1000.
-- A grouped number is one: a first group of one to three digits, not starting with 0, then
-- groups of exactly three ('1 000', '1\,000\,000', '12 345.5'; '0 012' is two). The costly check runs only on texts with a gap (CASE).
CREATE OR REPLACE MACRO digit_gap(x) AS
    CASE WHEN regexp_matches(x, '\d(?:\s|\\[,;:! ]|~)+\d')
         THEN regexp_matches(regexp_replace(x, '(^|\D)[1-9]\d{0,2}(?:(?:\s|\\[,;:! ]|~)+\d{3})+(\D|$)', '\1#\2', 'g'),
                             '[\d#](?:\s|\\[,;:! ]|~)+\d')  -- '#': a grouped number, which a digit may not follow either
         ELSE false END;

-- num_body(n): n (normalised) without a trailing '%' and, when every comma sits in a well-formed
-- thousands group ('1,234,567.5'), without its commas. '1,2', '12,34' and '0,012' keep theirs (a list,
-- a decimal comma: not decided here; no thousands group starts with 0), so they are not numbers.
CREATE OR REPLACE MACRO num_body(n) AS
    CASE WHEN contains(n, ',') AND regexp_full_match(n, '-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?%?')
         THEN replace(rtrim(n, '%'), ',', '')
         WHEN suffix(n, '%') THEN rtrim(n, '%') ELSE n END;  -- (rtrim costs even when there is nothing to trim)

-- num_value(b): the value of a number body, or NULL when it is not a plain number:
--   decimals with optional exponent ('2.50', '.5', '1e3'), fractions of integers ('3/4', '-1/2') and
--   LaTeX fractions of integers ('\frac{3}{4}', '-\dfrac{1}{2}'); a zero denominator is not a number.
--   TRY_CAST also reads 'inf', 'nan' (callers keep isfinite values only) and '1_000' (refused here),
--   and nothing else that is not a decimal (DuckDB 2.0; the rows in tests/unit/verify/test_verify.py check it).
CREATE OR REPLACE MACRO num_value(b) AS
    COALESCE(
        TRY_CAST(CASE WHEN NOT contains(b, '_') THEN b END AS DOUBLE),
        CASE
            WHEN contains(b, '/') AND regexp_full_match(b, '-?\d+/0*[1-9]\d*')
                THEN TRY_CAST(split_part(b, '/', 1) AS DOUBLE) / TRY_CAST(split_part(b, '/', 2) AS DOUBLE)
            WHEN contains(b, 'frac') AND regexp_full_match(b, '-?\\[dt]?frac\{\d+\}\{0*[1-9]\d*\}')
                THEN TRY_CAST(regexp_extract(b, '(-?)\\', 1) || regexp_extract(b, '\{(\d+)\}\{', 1) AS DOUBLE)
                     / TRY_CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS DOUBLE)
            WHEN contains(b, 'overline') THEN list_transform([num_rat(b)], lambda r: CAST(r.n AS DOUBLE) / CAST(r.d AS DOUBLE))[1]
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

-- sci_dec(b): a number body in scientific notation ('1.9e1', '-2.5e-1', '1e3': a decimal mantissa and an
-- exponent of at most three digits; norm_answer has lower-cased the E) as a plain decimal ('19',
-- '-0.25', '1000'), exactly: the point is moved in the text, never through a DOUBLE ('1e200' is 1 and 200
-- zeros); any other body is returned as it is. num_body's callers in verify.sql read it through this.
CREATE OR REPLACE MACRO sci_parts(s, i, f, k) AS  -- sign, integer and fraction digits, exponent
    s || CASE WHEN length(i) + k <= 0 THEN '0.' || repeat('0', CAST(-(length(i) + k) AS BIGINT)) || i || f
              WHEN length(i) + k >= length(i || f) THEN i || f || repeat('0', CAST(length(i) + k - length(i || f) AS BIGINT))
              ELSE left(i || f, CAST(length(i) + k AS BIGINT)) || '.' || substr(i || f, CAST(length(i) + k + 1 AS BIGINT)) END;
CREATE OR REPLACE MACRO sci_dec(b) AS
    CASE WHEN contains(b, 'e') AND regexp_full_match(b, '-?(?:\d+\.?\d*|\.\d+)e[-+]?\d{1,3}')
         THEN sci_parts(CASE WHEN starts_with(b, '-') THEN '-' ELSE '' END,
                        regexp_extract(b, '^-?(\d*)', 1), regexp_extract(b, '^-?\d*\.?(\d*)e', 1),
                        CAST(regexp_extract(b, 'e([-+]?\d+)$', 1) AS INTEGER))
         ELSE b END;

-- num_rat(b): a number body as an exact fraction {n, d} (HUGEINT, d > 0) when it is a decimal of at
-- most 17 characters, an integer fraction a/b or \frac{a}{b} of at most 17 digits each, or a mixed
-- number ('3\frac{1}{2}' = 7/2: its fraction proper, 8 digits each at most); NULL else.
-- rat_eq(a, b): a = b by cross-multiplication, exact: every product stays below 10^36 < 2^127.
-- A percent reading divides by 100 (d * 100), still below 10^38.
-- A repeating decimal i.f\overline{r} ('12.\overline{3}' = 37/3, '0.1\overline{6}' = 1/6, of at most
-- 17 digits) is (ifr - if) / (10^|f| * (10^|r| - 1)) (rep_rat, from its parts as a struct).
CREATE OR REPLACE MACRO rep_rat(p) AS
    {'n': (CAST(p.i || p.f || p.r AS HUGEINT) - CAST('0' || p.i || p.f AS HUGEINT)) * CASE WHEN p.s = '-' THEN -1 ELSE 1 END,
     'd': CAST(rpad('1', CAST(1 + length(p.f) AS INTEGER), '0') AS HUGEINT)
          * (CAST(rpad('1', CAST(1 + length(p.r) AS INTEGER), '0') AS HUGEINT) - 1)};

-- rep_notation(n): a repeating decimal written another way, as num_rat reads one ('0.\overline{3}'): a bar
-- or dot over the period ('0.\bar{3}', '0.1\dot{6}'), the period in brackets ('0.(3)'), or a digit written
-- three times or more before dots ('0.333...', '0.1666…'; a longer period, '0.142857...', is not read).
-- Anything else is left as it is (and is then no number).
CREATE OR REPLACE MACRO rep_notation(n) AS
    CASE WHEN regexp_matches(n, '\\(?:bar|dot)') THEN regexp_replace(n, '\\(?:bar|dot)\{?(\d+)\}?', '\\overline{\1}', 'g')
         WHEN regexp_matches(n, '\.\d*\(\d+\)$') THEN regexp_replace(n, '\((\d+)\)$', '\\overline{\1}')
         WHEN regexp_full_match(n, '-?\d*\.\d{3,}(?:\.{2,3}|…|\\[lc]?dots)')
              AND length(regexp_extract(n, '\.(\d+)', 1)) - length(rtrim(regexp_extract(n, '\.(\d+)', 1), right(regexp_extract(n, '\.(\d+)', 1), 1))) >= 3
             THEN regexp_extract(n, '^(-?\d*\.)', 1) || rtrim(regexp_extract(n, '\.(\d+)', 1), right(regexp_extract(n, '\.(\d+)', 1), 1))
                  || '\overline{' || right(regexp_extract(n, '\.(\d+)', 1), 1) || '}'
         ELSE n END;
CREATE OR REPLACE MACRO num_rat(b) AS
    CASE
        WHEN contains(b, 'overline') AND regexp_full_match(b, '-?\d*\.\d*\\overline\{\d+\}')
             AND length(regexp_replace(b, '\D', '', 'g')) <= 17
            THEN rep_rat(regexp_extract(b, '^(-?)(\d*)\.(\d*)\\overline\{(\d+)\}$', ['s', 'i', 'f', 'r']))
        WHEN length(b) <= 17 AND regexp_full_match(b, '-?(?:\d+\.?\d*|\.\d+)')
            THEN {'n': CAST(replace(b, '.', '') AS HUGEINT),
                  'd': CAST(rpad('1', CAST(1 + length(split_part(b, '.', 2)) AS INTEGER), '0') AS HUGEINT)}
        WHEN contains(b, '/') AND regexp_full_match(b, '-?\d{1,17}/0*[1-9]\d{0,16}')
            THEN {'n': CAST(split_part(b, '/', 1) AS HUGEINT), 'd': CAST(split_part(b, '/', 2) AS HUGEINT)}
        WHEN contains(b, 'frac') AND regexp_full_match(b, '-?\d{1,8}\\[dt]?frac\{\d{1,8}\}\{0*[1-9]\d{0,7}\}')
             AND CAST(regexp_extract(b, '\{(\d+)\}\{', 1) AS HUGEINT) < CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS HUGEINT)
            THEN {'n': (CAST(regexp_extract(b, '(\d+)\\', 1) AS HUGEINT) * CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS HUGEINT)
                        + CAST(regexp_extract(b, '\{(\d+)\}\{', 1) AS HUGEINT)) * CASE WHEN starts_with(b, '-') THEN -1 ELSE 1 END,
                  'd': CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS HUGEINT)}
        WHEN contains(b, 'frac') AND regexp_full_match(b, '-?\\[dt]?frac\{\d{1,17}\}\{0*[1-9]\d{0,16}\}')
            THEN {'n': CAST(regexp_extract(b, '(-?)\\', 1) || regexp_extract(b, '\{(\d+)\}\{', 1) AS HUGEINT),
                  'd': CAST(regexp_extract(b, '\}\{(\d+)\}', 1) AS HUGEINT)}
    END;
CREATE OR REPLACE MACRO rat_pct(r, pct) AS CASE WHEN pct THEN {'n': r.n, 'd': r.d * 100} ELSE r END;
CREATE OR REPLACE MACRO rat_eq(a, b) AS a.n * b.d = b.n * a.d;

-- The gold's exact decimal forms, computed once per problem (verify.sql golds), so that a decimal
-- answer, the common case, is decided by comparing canonical texts (no HUGEINT arithmetic per row):
-- rat_q20(n, d): n/d * 10^20 as an exact integer when n/d has at most 20 decimal places (n * 10^20
-- divisible by d; |n| < 10^18, so the product stays below 10^38 < 2^127), else NULL; q20_dec(q) its
-- canonical decimal text ('75000000000000000000' -> '0.75').
-- rat_repeats(n, d): n/d has no finite decimal expansion at all: its reduced denominator has a prime
-- factor other than 2 and 5, i.e. does not divide 2^56 * 5^24 (= 2^32 * 10^24; every 2^a * 5^b
-- <= 10^17, the largest denominator num_rat reads, divides it). No decimal answer equals such a gold.
-- dec_x100(s), dec_d100(s): a canonical decimal times 100 and divided by 100, by moving the point
-- (the two readings of a % on one side only), canonical again ('0.5' -> '50', '50' -> '0.5').
-- Each is NULL for NULL (dec_parts alone would read a NULL as '0').
CREATE OR REPLACE MACRO rat_q20(n, d) AS
    CASE WHEN (n * CAST('100000000000000000000' AS HUGEINT)) % d = 0 THEN n * CAST('100000000000000000000' AS HUGEINT) // d END;
CREATE OR REPLACE MACRO q20_dec(q) AS CASE WHEN q IS NOT NULL THEN
    dec_parts(q < 0,
              left(lpad(CAST(abs(q) AS VARCHAR), CAST(greatest(21, length(CAST(abs(q) AS VARCHAR))) AS INTEGER), '0'),
                   greatest(21, length(CAST(abs(q) AS VARCHAR))) - 20),
              right(lpad(CAST(abs(q) AS VARCHAR), CAST(greatest(21, length(CAST(abs(q) AS VARCHAR))) AS INTEGER), '0'), 20)) END;
CREATE OR REPLACE MACRO rat_repeats(n, d) AS
    CAST('4294967296000000000000000000000000' AS HUGEINT) % (d // gcd(n, d)) <> 0;
CREATE OR REPLACE MACRO dec_x100(s) AS CASE WHEN s IS NOT NULL THEN
    dec_parts(starts_with(s, '-'), split_part(ltrim(s, '-'), '.', 1) || left(split_part(s, '.', 2) || '00', 2),
              substr(split_part(s, '.', 2), 3)) END;
CREATE OR REPLACE MACRO dec_d100(s) AS CASE WHEN s IS NOT NULL THEN
    dec_parts(starts_with(s, '-'), left('00' || split_part(ltrim(s, '-'), '.', 1), length(split_part(ltrim(s, '-'), '.', 1))),
              right('00' || split_part(ltrim(s, '-'), '.', 1), 2) || split_part(s, '.', 2)) END;

-- not_a_number(n): NaN and infinities, which are never a correct answer (NaN = NaN as text).
CREATE OR REPLACE MACRO not_a_number(n) AS regexp_full_match(n, '[-+]?(?:nan|inf|infinity|∞)');

-- num_close(a, b, tol): a is within tol of the gold b, relative above |b| = 1, absolute below:
-- |a - b| <= tol * max(1, |b|) (config verify.numeric_tolerance; default 0, and verify.sql applies
-- it only to golds that are not integers: exactness is decided by dec_canon / num_rat).
CREATE OR REPLACE MACRO num_close(a, b, tol) AS abs(a - b) <= tol * greatest(1.0, abs(b));

-- norm_verdict(n): a logic verdict, created by rlvr.verify.connect from rlvr.logic.VERDICT_PAIRS
-- (one table for SQL and Python): n (norm_answer's output) with its curly apostrophes read as "'",
-- trimmed of rlvr.logic.VERDICT_STRIP, one VERDICT_FONTS command around it dropped ('\textsc{true}'),
-- and looked up; NULL when it is not a verdict ('maybe').

-- norm_formula(s): a propositional formula with ASCII operators mapped to the unicode ones and the
-- whitespace removed ('P & ~Q -> R' = 'P∧¬Q→R'). SQL only decides formulas identical to the gold
-- one this way; every other answer goes to rlvr.logic (parsed, checked by truth table).
CREATE OR REPLACE MACRO norm_formula(s) AS
    replace(replace(replace(replace(replace(replace(replace(replace(
        regexp_replace(s, '\s+', '', 'g'),
        '<->', '↔'), '<=>', '↔'), '->', '→'), '=>', '→'), '&', '∧'), '|', '∨'), '~', '¬'), '!', '¬');
