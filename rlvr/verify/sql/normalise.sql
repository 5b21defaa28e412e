-- Normalisation: an answer's comparable text (norm_answer) and its exact value (num_value, dec_canon, num_rat).
-- Loaded by rlvr.verify.scoring.connect before markers.sql. What each rule reads: docs/verifiers.md. Tests:
-- tests/unit/verify/sql/test_normalise.py (a table per macro), tests/unit/verify/test_verify.py (true and false
-- rows per rule, through the verify pass), test_verify_exact.py (against Python fractions).

-- norm_latex(s): \text{} and its kin unwrapped with a space each side (a pass before whitespace goes, so that
-- '5\text{ cm}' is '5cm'), \frac12 braced, \boxed{} (five levels of braces, a box in a box) and \( \) \[ \]
-- dropped; an answer wrapped whole in **, `, *, __, quotes, brackets, or parentheses or braces without a comma
-- is its contents ('(0, 1)' stays an interval); \left, \right, \displaystyle dropped; '~' before a word is a space
-- ('~13' stays an approximation); \varnothing and ∅ are \emptyset, \varepsilon and its kin their letters.
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

-- norm_answer(s): the comparable text: Unicode digits as ASCII (norm_digits, rlvr.verify.scoring.digits_macro),
-- norm_latex, lower case, whitespace, degrees, LaTeX spaces and currency signs dropped, '{,}' as ',', '−' as '-',
-- \% as %, a leading '+', '=' or ':' and a trailing '.' or ',' dropped; commas kept (num_body reads them).
-- norm_cased(s): the same with the case kept (a symbolic gold's answer differing in case goes to math-verify).
-- Both read a minus in a fraction's numerator as in front of the fraction ('\frac{-3}{4}').
CREATE OR REPLACE MACRO norm_cased(s) AS
    regexp_replace(regexp_replace(
        replace(
            replace(
                regexp_replace(norm_latex(norm_digits(s)), '\s+|\\?[$€£¥₹]|\^\{?\\circ\}?|°|\\[,!;: ]|\{(,)\}', '\1', 'g'),
                '−', '-'),
            '\%', '%'),
        '^[+=:]|[.,]$', '', 'g'), '^\\([dtc]?frac)\{-', '-\\\1{');
CREATE OR REPLACE MACRO norm_answer(s) AS lower(norm_cased(s));
-- norm_plain(s): norm_answer of a text of digits and , . / % + - − $ € £ only, by the steps that act on it.
CREATE OR REPLACE MACRO norm_plain(s) AS
    regexp_replace(replace(replace(replace(replace(s, '$', ''), '€', ''), '£', ''), '−', '-'), '^\+|[.,]$', '', 'g');

-- plain_decimal(s): '42', '-3.5', '007': norm_answer leaves it as it is, so it skips normalisation.
CREATE OR REPLACE MACRO plain_decimal(s) AS regexp_full_match(s, '-?\d+(?:\.\d+)?');

-- digit_gap(x): digits split by spacing other than thousands grouping ('1 2', '12 13', '10 00'): several numbers,
-- where norm_answer, which removes spacing, would read one. A grouped number ('1 000', '1\,000\,000') is one.
CREATE OR REPLACE MACRO digit_gap(x) AS
    CASE WHEN regexp_matches(x, '\d(?:\s|\\[,;:! ]|~)+\d')
         THEN regexp_matches(regexp_replace(x, '(^|\D)[1-9]\d{0,2}(?:(?:\s|\\[,;:! ]|~)+\d{3})+(\D|$)', '\1#\2', 'g'),
                             '[\d#](?:\s|\\[,;:! ]|~)+\d')  -- '#': a grouped number, which a digit may not follow either
         ELSE false END;

-- num_body(n): n (normalised) without a trailing '%' and, when every comma is in a thousands group, its commas
-- ('1,2', '0,012' keep theirs, and are no numbers).
CREATE OR REPLACE MACRO num_body(n) AS
    CASE WHEN contains(n, ',') AND regexp_full_match(n, '-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?%?')
         THEN replace(rtrim(n, '%'), ',', '')
         WHEN suffix(n, '%') THEN rtrim(n, '%') ELSE n END;  -- (rtrim costs even when there is nothing to trim)

-- num_value(b): the value of a number body (a decimal, exponent, a/b or \frac{a}{b}, a repeating decimal), NULL
-- else; a zero denominator is no number. TRY_CAST also reads 'inf' and 'nan' (callers keep finite values) and
-- '1_000' (refused here).
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

-- dec_canon(b): a plain decimal body in one canonical text ('-0042.50' -> '-42.5', '-0' -> '0'), NULL else:
-- compared as text, exact at any length. dec_parts(neg, ip, fp): that text from its parts (callers pass columns:
-- macros are inlined).
CREATE OR REPLACE MACRO dec_parts(neg, ip, fp) AS
    CASE WHEN neg AND (ltrim(ip, '0') <> '' OR rtrim(fp, '0') <> '') THEN '-' ELSE '' END
    || COALESCE(NULLIF(ltrim(ip, '0'), ''), '0')
    || CASE WHEN rtrim(fp, '0') <> '' THEN '.' || rtrim(fp, '0') ELSE '' END;
CREATE OR REPLACE MACRO dec_canon(b) AS
    CASE WHEN regexp_full_match(b, '-?(?:\d+\.?\d*|\.\d+)')
         THEN dec_parts(starts_with(b, '-'), split_part(ltrim(b, '-'), '.', 1), split_part(b, '.', 2)) END;

-- sci_dec(b): scientific notation ('1.9e1', '-2.5e-1'; exponent of three digits at most) as a plain decimal, the
-- point moved in the text, never through a DOUBLE ('1e200' is 1 and 200 zeros); any other body as it is.
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

-- num_rat(b): a number body as an exact fraction {n, d} (HUGEINT, d > 0): a decimal of 17 characters at most,
-- a/b or \frac{a}{b} of 17 digits each, a mixed number, a repeating decimal i.f\overline{r} (rep_rat:
-- (ifr - if) / (10^|f| * (10^|r| - 1))); NULL else. rat_eq: cross-multiplication, every product below 2^127.
CREATE OR REPLACE MACRO rep_rat(p) AS
    {'n': (CAST(p.i || p.f || p.r AS HUGEINT) - CAST('0' || p.i || p.f AS HUGEINT)) * CASE WHEN p.s = '-' THEN -1 ELSE 1 END,
     'd': CAST(rpad('1', CAST(1 + length(p.f) AS INTEGER), '0') AS HUGEINT)
          * (CAST(rpad('1', CAST(1 + length(p.r) AS INTEGER), '0') AS HUGEINT) - 1)};

-- rep_notation(n): a repeating decimal in another notation ('0.\bar{3}', '0.1\dot{6}', '0.(3)', a digit three
-- times before dots: '0.333...') as num_rat reads one; anything else as it is.
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

-- The gold's exact decimal forms, once per problem (verify.sql golds), so that a decimal answer is decided by
-- comparing texts: rat_q20(n, d) is n/d * 10^20 when n/d has at most 20 places (|n| < 10^18: below 2^127),
-- q20_dec(q) its canonical text; rat_repeats(n, d): no finite expansion (the reduced denominator does not divide
-- 2^32 * 10^24, which every denominator num_rat reads with only 2 and 5 divides). dec_x100, dec_d100: the point
-- moved by two places (the readings of a % on one side only). NULL for NULL.
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

-- not_a_number(n): NaN and infinities, never a correct answer (NaN = NaN as text).
CREATE OR REPLACE MACRO not_a_number(n) AS regexp_full_match(n, '[-+]?(?:nan|inf|infinity|∞)');

-- num_close(a, b, tol): |a - b| <= tol * max(1, |b|) (verify.numeric_tolerance, for golds that are not integers).
CREATE OR REPLACE MACRO num_close(a, b, tol) AS abs(a - b) <= tol * greatest(1.0, abs(b));

-- norm_verdict(n): made by rlvr.verify.scoring.verdict_macro from rlvr.verify.logic's tables.

-- norm_formula(s): ASCII operators as the unicode ones, no whitespace ('P & ~Q -> R' = 'P∧¬Q→R'); SQL decides
-- a formula identical to the gold's, rlvr.verify.logic every other.
CREATE OR REPLACE MACRO norm_formula(s) AS
    replace(replace(replace(replace(replace(replace(replace(replace(
        regexp_replace(s, '\s+', '', 'g'),
        '<->', '↔'), '<=>', '↔'), '->', '→'), '=>', '→'), '&', '∧'), '|', '∨'), '~', '¬'), '!', '¬');
