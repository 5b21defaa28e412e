-- Symbolic golds: whether an answer is in the gold's form before math-verify compares the two
-- (math-verify evaluates what it reads, so an unevaluated or unsimplified form would be paid).
-- verify.sql's not_value reads them. Tests: tests/unit/verify/test_verify.py, tests/integration/test_redteam.py.

-- looks_symbolic(n): n (normalised) needs a symbolic checker: LaTeX commands or braces, powers,
-- sub-scripts, brackets (intervals, tuples), relations, operators after a digit, sqrt/pi/infinity,
-- a digit beside a letter ('2x'), a list of numbers ('1,2'), a sum ('x+1', 'abc+1') or a difference with a
-- number or a single letter ('x-y'). Plain words ('paris', 'new-york') are not.
CREATE OR REPLACE MACRO looks_symbolic(n) AS
    regexp_matches(n, '[\\^{}_()\[\]=<>*/|!]|sqrt|pi|inf|[0-9][a-z]|[a-z][0-9]|[0-9.][+-]|[0-9],[0-9]|[a-z0-9)]\+|(?:^|[^a-z])[a-z]-|-[a-z](?:[^a-z]|$)');

-- text_words(x): x holds a word (two letters or more) inside \text{}, \mathrm{} and their kin, where
-- math-verify does not read it ('2\sqrt{3} \text{ else } 3\sqrt{2}'); LaTeX commands inside are not words.
CREATE OR REPLACE MACRO text_words(x) AS
    regexp_matches(x, '\\(?:text\w*|math(?:rm|sf|tt|it|bf)|mbox|hbox|operatorname)\s*\{(?:[^{}\\]|\\[,;:! ])*(?:[A-Za-z]|[\[\]()<>=+,;|\d%])');

-- unsimplified(n): n (normalised) is a closed form with a step still to take (math-verify
-- would pay each for its simplified form):
--   a fraction whose leading integers cancel ('\frac{2\sqrt{2}}{12}', '\cfrac{(2)\sqrt{2}}{12}',
--   '\frac{4}{6}x', '2\sqrt{2}/12', 'x^{4/2}'; a sum above does not cancel, '\frac{2+\sqrt{5}}{4}', nor
--   does the base of a power, '\frac{2^{1/2}}{2}'), one over a negative number or over 1, a fraction in a
--   fraction, a fraction times an integer after it ('\frac{\sqrt{2}}{12}\cdot 2'), the same above and below;
--   the root of a perfect power ('\sqrt{36}', '\sqrt[3]{8}', '\sqrt[10]{1}');
--   a function of 0 or 1 ('\cos 0', '\cos\left(0\right)', '\exp(0)', '\ln 1', '\ln e', 'e^0', 'e^{-0}');
--   a step that changes nothing: a power of 1 ('x^{1}'), 1 to a power ('1^{x}'), a factor 1 ('1x',
--   '\cdot 1'), a term 0 ('+0'), a division sign ('\div', '\over'); a decimal in a root or a fraction
--   ('\sqrt{1.0}').
-- Also: two literals multiplied beside a symbol ('2\times 3\pi', '3(2\pi)'), a power of three digits or
-- a power in a power ('(x+1)^{9999}': math-verify would time out, and a timeout is no penalty).
-- An integer factor at the end of a group is caught ('\frac{\sqrt{2}\cdot 2}{12}'); one in the middle is not.
-- A radical with a square factor ('\sqrt{12}' for 2\sqrt{3}) is another closed form of the same value,
-- and is paid. Each check runs only on a text that holds its command (CASE); the list functions run
-- on symbolic rows only (verify.sql). Literal wrappers are read as the literal first ('{(2)}', '{{12}}').
CREATE OR REPLACE MACRO frac_terms(n) AS  -- \frac{a...}{b...} with a and b leading integers: [a, b, a's power mark]
    list_transform(regexp_extract_all(n, '\\[dtc]?frac\{-?\d{1,18}(?:[^{}+-]|\{[^{}]*\})*\}\{-?\d{1,18}(?:[^{}+-]|\{[^{}]*\})*\}'),
        lambda m: regexp_extract(m, '^\\[dtc]?frac\{-?(\d+)(\^?)(?:[^{}+-]|\{[^{}]*\})*\}\{(-?)(\d+)(\^?)', ['a', 'ap', 'neg', 'b', 'bp']));
CREATE OR REPLACE MACRO unsimplified(n0) AS
    CASE WHEN contains(n0, 'frac') OR contains(n0, '/') THEN
        COALESCE(list_bool_or(list_transform(frac_terms(regexp_replace(n0, '\{[({](-?\d+)[)}]', '{\1', 'g')),
                 lambda t: t.neg = '-' OR (t.ap = '' AND t.bp = '' AND gcd(CAST(t.a AS HUGEINT), CAST(t.b AS HUGEINT)) <> 1)
                           OR CAST(t.b AS HUGEINT) = 1)), false)
        OR COALESCE(list_bool_or(list_transform(
               regexp_extract_all(n0, '(?:^|[^\w.^}])\d{1,18}(?:\\[a-z]+(?:\{[^{}]*\})?|[a-z])*/\d{1,18}(?:$|[^\d.^])'),
               lambda m: gcd(CAST(regexp_extract(m, '(\d+)\D*/', 1) AS HUGEINT), CAST(regexp_extract(m, '/(\d+)', 1) AS HUGEINT)) <> 1
                         OR CAST(regexp_extract(m, '/(\d+)', 1) AS HUGEINT) = 1)), false)
        OR regexp_matches(n0, '\\[dtc]?frac\{[^{}]*\}\{1\}|\\[dtc]?frac\{(?:[^{}]|\{[^{}]*\})*\\[dtc]?frac|\}\{\\[dtc]?frac|\\[dtc]?frac\{(?:[^{}]|\{[^{}]*'
            || '\})*\}\{(?:[^{}]|\{[^{}]*\})*\}(?:\\cdot|\\times|\*)\d+(?:$|[^\d.^])'
                          || '|\}(?:\\cdot|\\times|\*)\d+\}')
        -- the same above and below: '\frac{x}{x}'
        OR COALESCE(list_bool_or(list_transform(regexp_extract_all(n0, '\\[dtc]?frac\{[^{}]*\}\{[^{}]*\}'),
                    lambda m: regexp_extract(m, '\{([^{}]*)\}\{', 1) = regexp_extract(m, '\}\{([^{}]*)\}$', 1))), false)
    ELSE false END
    OR CASE WHEN contains(n0, 'sqrt') THEN COALESCE(list_bool_or(list_transform(
             -- '\sqrt4' is '\sqrt{4}'; the root's index ('\sqrt[3]{8}'), 2 by default
             regexp_extract_all(regexp_replace(n0, '\\sqrt(\[\d+\])?(\d)', '\\sqrt\1{\2}', 'g'), '\\sqrt(?:\[\d+\])?\{\d{1,12}\}'),
             lambda m: round(pow(CAST(regexp_extract(m, '\{(\d+)\}', 1) AS DOUBLE), 1.0 / COALESCE(TRY_CAST(regexp_extract(m, '\[(\d+)\]', 1) AS DOUBLE), 2.0)))
                       ^ COALESCE(TRY_CAST(regexp_extract(m, '\[(\d+)\]', 1) AS DOUBLE), 2.0)
                       = CAST(regexp_extract(m, '\{(\d+)\}', 1) AS DOUBLE))), false)
         ELSE false END
    OR regexp_matches(replace(replace(regexp_replace(n0, '\\left|\\right', '', 'g'), '{(', '('), ')}', ')'),
                      '\\(?:sin|cos|tan|sec|csc|cot|sinh|cosh|tanh|arcsin|arccos|arctan|exp)(?:\{0+(?:\.0+)?\}|\(0+(?:\.0+)?\)|0+(?:\.0+)?)(?:$|[^\d.])'
                      || '|\\(?:ln|log)(?:_(?:\{[^{}]*\}|\w))?(?:\{1\}|\(1\)|1)(?:$|[^\d.])|\\ln(?:\{e\}|\(e\)|e)(?:$|[^a-z])'
                      || '|\^(?:\{-?\(?-?0+(?:\.0+)?\)?\}|\(-?0+(?:\.0+)?\)|0+(?:\.0+)?)(?:$|[^\d.])'
                      || '|\^(?:\{1\}|1)(?:$|[^\d./])|(?:\\cdot|\\times|\*)1(?:$|[^\d.])|(?:^|[^\d.])1(?:\\cdot|\\times|\*)'
                      || '|(?:^|[-+(=,{\[])1(?:[a-z](?:[^a-z]|$)|\\(?:sqrt|pi|sin|cos|tan|log|ln))|[-+]0(?:$|[^\d.])|\\div|÷|\\over(?:$|[^a-z])'
                      || '|\d(?:\\cdot|\\times|\*|×|·|⋅)(?:-?\d+(?:$|[^\d^.])|\\[dtc]?frac)|(?:^|[^\w.^{])\d+\(-?\d|\^\s*\{?\s*-?\d{3,}|\^\s*\{[^{}]*\^'
                      || '|(?:^|[^\d.])1\^|\\(?:sqrt|[dtc]?frac)(?:\[\d+\])?\{[^{}]*\d\.\d|\\[dtc]?frac\{[^{}]*\}\{[^{}]*\d\.\d');

-- ops_beyond(a, g): the answer a applies a kind of operation the gold g has none of: trigonometry,
-- logarithms and exponentials (e^ counts for the gold), the gamma function, floor or ceiling,
-- absolute value bars, max or min, set operations: 'x^2+\sin\frac{\pi}{2}', 'x^2+\log_{10}10', 'x^2+|-1|'
-- for x^2+1, '(0,1)\cup\emptyset' for (0,1) are not in the gold's form. Both normalised.
CREATE OR REPLACE MACRO ops_beyond(a, g) AS
    (regexp_matches(a, '\\(?:a(?:rc)?)?(?:sin|cos|tan|sec|csc|cot)h?(?:[^a-z]|$)') AND NOT regexp_matches(g, '\\(?:a(?:rc)?)?(?:sin|cos|tan|sec|csc|cot)'))
    OR (regexp_matches(a, '\\(?:log|ln|lg|exp)(?:[^a-z]|$)') AND NOT regexp_matches(g, '\\(?:log|ln|lg|exp)|e\^'))
    OR (regexp_matches(a, '\\(?:gamma|lfloor|lceil|max|min)(?:[^a-z]|$)|\\operatorname\{(?:max|min|floor|ceil)')
        AND NOT regexp_matches(g, '\\(?:gamma|lfloor|lceil|max|min)|\\operatorname'))
    OR (regexp_matches(a, '\||\\[lr]?vert') AND NOT regexp_matches(g, '\||\\[lr]?vert'))
    OR (regexp_matches(a, '\\(?:cup|cap|setminus|emptyset|varnothing)|∅|∪|∩') AND NOT regexp_matches(g, '\\(?:cup|cap|setminus|emptyset|varnothing)|∅|∪|∩'));

-- strip_name(s): s without a name in front of its value: 'x =', 'f(x) =', 'f^{-1}(x) =', "f'(x) =",
-- 'a_{n} =', 'S_{10} =', 'P(A) =', 'AB =', '\theta =', '\Delta x =', '\overline{AB} =', '(x, y) =', 'x \in',
-- '\frac{dy}{dx} =', '[ABC] =', '|AB| =', '\cos\theta =', '\sin^2\theta =', '\text{Area} ='. A name is a
-- letter, two to four capitals, a Greek letter or one of these forms; a word ('not =', 'wrong =') or
-- another command ('\sqrt{13} =', '\neg =') is not, so the '=' after it stays.
-- (raw or normalised text: case and spaces either way). What is left is the answer.
CREATE OR REPLACE MACRO strip_name(s) AS regexp_replace(s,
    '^\s*(?:(?:m\s*)?(?:[A-Za-df-z]|[A-Z]{2,4}|\\(?:[aA]lpha|[bB]eta|[gG]amma|[dD]elta|epsilon|zeta|eta|[tT]heta|kappa|[lL]ambda|mu|nu|[xX]i|[pP]hi|rho|[sS'
        || ']igma|tau|[oO]mega|[pP]si|chi)(?:\s*[A-Za-z])?'
    || '|\\(?:angle|overline|triangle)\s*\{?\s*[A-Z]{1,3}\s*\}?|\\(?:mathbf|vec|boldsymbol)\s*\{?\s*[A-Za-z]\s*\}?)\s*(?:_\s*(?:\{[^{}]*\}|\w))?\s*(?:\^\s*'
        || '\{[^{}]*\}|'')?\s*(?:\([^()]*\))?'
    || '|\([A-Za-z,\s]+\)|\\[dt]?frac\s*\{\s*d\w*\s*\}\s*\{\s*d\w*\s*\}|\[[A-Z]{2,4}\]|\|[A-Z]{2,4}\||\\text\s*\{\s*[A-Z][a-z]+(?:\s+[a-z]+)?\s*\}'
    || '|\\(?:sin|cos|tan|sec|csc|cot)\s*(?:\^\s*\{?\d\}?)?\s*(?:\\(?:alpha|beta|gamma|theta|phi)|[A-Za-z]))'
    || '\s*(?:=|\\in\b)\s*', '');

-- value_atoms(s): how many values s (norm_latex'ed, case and spaces kept) is written with: numbers,
-- letters, and commands other than layout, operators and relations (\frac, \cdot, \le, \cup, \left,
-- \quad, \text, ...), a
-- name in front left out ('f(x) =', 'A =', 'x \in'). An answer written with more than one atom more
-- than its gold is not in the gold's form: 'x^2+1+x-x', '\frac{\sqrt{2}}{2}\cdot\frac{1}{3}',
-- '(0, \log_2 2)', '$3\sqrt{2}$ $2\sqrt{3}$' (math-verify would pay each); '(x-1)(x+1)'
-- for x^2-1 is within one.
CREATE OR REPLACE MACRO value_atoms(s) AS len(regexp_extract_all(
    regexp_replace(regexp_replace(strip_name(s), '(?:^|[^A-Za-z\\])(?:and|or)(?:[^A-Za-z]|$)', ' ', 'g'),
        '\\(?:left|right|[bB]igg?[lrm]?|[dtc]?frac|cdot|times|[lg]eq?|[lg]eqslant|[lg]t|neq?|in|cup|cap|setminus|displaystyle|textstyle|q?quad|hspace|text\'
            || 'w*|math(?:rm|bf|it|sf|tt)|boldsymbol|bm|mbox|operatorname|limits)\b|\\[,;:! ]',
        ' ', 'g'),
    '\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]'));

-- unevaluated(n): n (normalised) holds arithmetic that still needs evaluating: an operator between two
-- literal numbers ('3*4', '7+12', '5-9', '\sqrt{4\cdot3}', 'x^2+2-1'; a number beside a symbol is a
-- coefficient, not an operand: '2+3\sqrt{2}', '3+4i' are values), an integer power of an integer
-- ('2^3'), a factorial, \binom / \choose, sums, products, integrals, limits (echoing
-- 'What is 3 * 4?' as '3 * 4' is not an answer). A fraction a/b is a number, not an operation. A
-- literal in braces or parentheses after an operator is read as the literal ('\sqrt{4\cdot{3}}',
-- '\sqrt{(2)^2\cdot 3}', 'x^2+2+(-1)'). A power of a bracket of numbers, matrix arithmetic
-- and a sum with a radical in a denominator are not in a value's form either ('(1+\sqrt{2})^2' for
-- 3+2\sqrt{2}, '2\begin{pmatrix}...', '\frac{1}{3-2\sqrt{2}}').
-- dec_places(n): the most decimal places of a number in n, trailing zeros aside ('(0.5000004, 3)': 7).
CREATE OR REPLACE MACRO dec_places(n) AS
    COALESCE(list_max(list_transform(regexp_extract_all(n, '\d\.(\d*[1-9])', 1), lambda d: length(d))), 0);
CREATE OR REPLACE MACRO unevaluated(n) AS regexp_matches(
    -- a literal in braces or brackets after an operator is the literal ('\cdot{3}', '+(-1)', '{(1)+2}')
    regexp_replace(n, '(^|[-+*/=^(\[{,×·÷]|\\cdot|\\times|\\div)[{(](-?\d+(?:\.\d+)?)[})]', '\1\2', 'g'),
    '(?:^|[-+*/=(\[{,;&<>≤≥×·÷\\]|\\cdot|\\times|\\div|\\q?quad|\\[lg]eq?|\\[lg]t|\\begin\{[a-z]*matrix\})(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})'
    || '(?:[-+*×·÷]|\\cdot|\\times|\\div)(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})(?:$|[-+*/=)\]},;&<>×·÷]|\\(?:\d|end|\}|\]|q?quad)|\\cdot|\\times|\\d'
        || 'iv|or)'
    || '|(?:^|[^\w.}])\d+\^(?:\d|\{\d+\})|[\d)}]!|\\d?binom|\\choose|\\sum|\\prod|\\int|\\lim'
    -- a bracket of numbers raised to a power ('(1+\sqrt{2})^2'; '(2x-3)^2' is a factored form) or any bracket to a
    -- power of two digits ('(x+y+z)^{60}', which math-verify cannot expand in time), a scalar or sign before a
    -- matrix, a transpose, a product of matrices, a sum with a radical in a denominator ('\frac{1}{3-2\sqrt{2}}';
    -- '\frac{1}{\sqrt{2}}' is paid)
    || '|\((?:[-+*/.\d]|\\sqrt\{\d+\}|\\cdot|\\times)+\)\^\{?-?\d|\)\^\{?\d\d|(?:^|[^&\\{])[-\d]\\begin\{[a-z]*matrix\}'
    || '|\\end\{[a-z]*matrix\}(?:\^|(?:\\cdot|\\times|\*)?\\begin)|\\[dt]?frac\{[^{}]*\}\{[^{}]*(?:[-+][^{}]*\\sqrt|\\sqrt\{\d+\}[-+])')
    OR unsimplified(n);

-- unit_word(w): w (one or two words) is a unit of measure from a fixed list (a single letter only as the
-- case-exact m, s, g, N, J, W, V; 'M', 'k', 'i', 'e', 'x' are not units): length, area
-- and volume ('cm', 'square meters', 'cubic feet'), mass, time, money, physics (newtons, joules, watts,
-- volts, amperes, pascals, hertz, coulombs, kelvin, moles, liters), 'units', and radians. Not degrees
-- (for a gold without them, degrees are another number), scale words, or anything that hedges.
CREATE OR REPLACE MACRO unit_word(w) AS regexp_full_match(w, '[msgNJWV]') OR regexp_full_match(lower(w),
    '(?:(?:square|sq\.?|cubic|cu\.?)\s+)?(?:mm|cm|dm|km|in|inch|inches|ft|foot|feet|yd|yds|yard|yards|mi|mile|miles|'
    || '(?:milli|centi|deci|kilo)?(?:meter|metre)s?|mg|kg|grams?|kilograms?|lbs?|pounds?|oz|ounces?|tons?|tonnes?|'
    || 'sec|secs|seconds?|min|mins|minutes?|hr|hrs|hours?|days?|weeks?|months?|years?|'
    || 'dollars?|cents|euros?|units?|newtons?|joules?|watts?|volts?|amps?|amperes?|pa|pascals?|'
    || 'hz|hertz|coulombs?|kelvin|mol|moles?|ml|liters?|litres?|milliliters?|millilitres?|rad|radians?)\.?');

-- value_tail(x): x (raw) without what follows its value and does not change it: a unit in \text{} or
-- \mathrm{} ('36\pi \text{ cm}^2', '2\sqrt{3}~\text{m}': unit_word) or an integer qualifier whose letter
-- the answer has (', k \in \mathbb{Z}', '\text{ for integer } k': k, m or n over the integers only; x \in,
-- \mathbb{N} or \mathbb{R} restrict or change the answer); x as it is otherwise (other
-- plain words stay: 'doubtful', 'millions' and 'degrees' hedge or change the answer).
CREATE OR REPLACE MACRO value_tail(x) AS
    CASE WHEN NOT regexp_matches(x, '\\(?:text|mathrm|mbox|in)') THEN x  -- (the common case, one cheap test)
         WHEN regexp_matches(x, '[\d}\w)]\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{\s*[a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?\s*\}(?:\^\s*\{?[23]'
             || '\}?)?\s*$')
              AND unit_word(regexp_extract(x, '\{\s*([a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?)\s*\}(?:\^\s*\{?[23]\}?)?\s*$', 1))
         THEN regexp_replace(x, '\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}(?:\^\s*\{?[23]\}?)?\s*$', '')
         WHEN regexp_matches(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mat'
             || 'hbb\s*\{?Z\}?\s*\)?\s*$|\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$')
              AND contains(regexp_replace(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s'
                  || '*\\in\s*\\mathbb\s*\{?Z\}?\s*\)?\s*$|\s*\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$', ''),
                           regexp_extract(x, '([kmn])\s*(?:\\in\s*\\mathbb\s*\{?Z\}?\s*\)?)?\s*$', 1))
         THEN regexp_replace(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mat'
             || 'hbb\s*\{?Z\}?\s*\)?\s*$|\s*\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$', '')
         ELSE x END;

-- uni_math(x): Unicode math as LaTeX, for a symbolic answer ('√2' -> '\sqrt{2}', '2√3' -> '2\sqrt{3}',
-- '√(x+1)' -> '\sqrt{x+1}', '∛2' -> '\sqrt[3]{2}', '⁴√2' -> '\sqrt[4]{2}', 'x²' -> 'x^{2}', 'x⁻¹' -> 'x^{-1}', '½' ->
-- '\frac{1}{2}'), which math-verify does
-- not read (so '<answer>5√2</answer>' would be refused for 5\sqrt{2}).
CREATE OR REPLACE MACRO uni_math(x) AS
    CASE WHEN regexp_matches(x, '[√∛⁰¹²³⁴⁵⁶⁷⁸⁹⁻½⅓⅔¼¾]')
         THEN translate(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                  replace(replace(replace(replace(replace(x, '½', '\frac{1}{2}'), '⅓', '\frac{1}{3}'), '⅔', '\frac{2}{3}'),
                          '¼', '\frac{1}{4}'), '¾', '\frac{3}{4}'),
                  '([⁰¹²³⁴⁵⁶⁷⁸⁹])√\s*(\d+|[A-Za-z])', '\\sqrt[\1]{\2}', 'g'),
                  '√\s*\(([^()]*)\)', '\\sqrt{\1}', 'g'), '√\s*(\d+|[A-Za-z]|\\pi)', '\\sqrt{\1}', 'g'),
                  '∛\s*(\d+|[A-Za-z])', '\\sqrt[3]{\1}', 'g'), '(^|[^\[⁰¹²³⁴⁵⁶⁷⁸⁹⁻])(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)', '\1^{\2}', 'g'), '⁻⁰¹²³⁴⁵⁶⁷⁸⁹', '-0123456789')
         ELSE x END;

-- eq_computed(x): the sides of x before its last '=' compute the last one, so the last side is the answer
-- (verify.sql joined; '\sqrt{72} = 6\sqrt{2}', 'c = \sqrt{6^2+6^2} = \sqrt{72} = 6\sqrt{2}', '(x-2)(x+2) =
-- x^2-4', '\int_0^1 \frac{dx}{1+x^2} = \frac{\pi}{4}', '\theta = \arctan 1 = \frac{\pi}{4}', '\sin 60^\circ =
-- \frac{\sqrt{3}}{2}' are each one value, not several): the side just before it holds an operation the last side is the
-- value of (an integral, sum, limit, function, binomial, factorial, product of brackets, power of a number, \cdot
-- or \times, a sum under a root or in a fraction, a root of a number with a square factor). 'x = 2\sqrt{3} = 3\sqrt{2}' and '\arctan 1 =
-- \frac{\pi}{4} = \frac{\pi}{3}' compute nothing at their last '=' and stay several values; like '4 \times 4 = 12' for a
-- number, a false computation is not checked.
CREATE OR REPLACE MACRO eq_computed(x) AS list_transform([regexp_extract(x, '([^=]*)=[^=]*$', 1)], lambda side:  -- (bound once)
    regexp_matches(side,
        '\\(?:int|iint|oint|sum|prod|lim|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|log|ln|exp|binom)\b|\)\s*\(|\d\s*\^|\}\s*\^|\)\s*\^|!|'
            || '\\cdot|\\times|\\sqrt\s*(?:\[[^\]]*\])?\s*\{[^{}]*[-+^*]|\\[dt]?frac\s*\{[^{}]*[-+]')
    OR list_bool_or(list_transform(regexp_extract_all(side, '\\sqrt\s*\{\s*(\d{1,9})\s*\}', 1),
                                   lambda n: list_bool_or(list_transform(range(2, 32), lambda k: CAST(n AS BIGINT) % (k * k) = 0)))))[1];

-- set_shape(n): the shape of n (normalised), a name in front ('s =', 'x \in'), \displaystyle and spacing
-- after it left out: 'set' for values in braces ('\{1,2\}', '\left\{0,1\right\}', '{0,1}', '\{0;1\}'),
-- 'tuple' for values in brackets ('(1,2)', '[0,1)'), 'list' for values without any ('0,1'), '' else
-- (one value, or brackets inside: '(1,2),(3,4)', '\{0\}\cup(0,1)'). A set, a tuple or interval and a
-- bare list are three shapes (math-verify would pay '\{0, 1\}' and '0, 1' for (0, 1)).
CREATE OR REPLACE MACRO shape_of(x) AS
    CASE WHEN NOT regexp_matches(x, '[,;]') THEN ''
         WHEN regexp_full_match(x, '(?:\\left)?\\\{(?:[^\\]|\\[^{}])*[,;](?:[^\\]|\\[^{}])*(?:\\right)?\\\}|\{[^{}]*[,;][^{}]*\}') THEN 'set'
         WHEN regexp_full_match(x, '(?:\\left)?(?:[(\[]|\\langle)[^()\[\]]*[,;][^()\[\]]*(?:\\right)?(?:[)\]]|\\rangle)') THEN 'tuple'
         WHEN NOT regexp_matches(x, '^(?:\\left)?(?:[(\[{]|\\\{|\\langle)') THEN 'list'
         ELSE '' END;
CREATE OR REPLACE MACRO set_shape(n) AS shape_of(regexp_replace(strip_name(n), '\\displaystyle|\\textstyle|\\q?quad|\\hspace\{[^{}]*\}', '', 'g'));

-- letters(s): what names a variable or a constant in s, case kept: single letters, a word as one token
-- ('Answer', 'and': a capital and lower-case letters, three or more; 'GmM' and 'XYZ' are their letters)
-- and LaTeX commands ('N', '\Pi'); a name in front ('A =', 'f(x) =') and sets in \mathbb{} are left out, \text{} and its
-- kin are read through ('\mathrm{n}' is n), and sizing commands are dropped (\big, \Big: one bracket in
-- two sizes).
-- case_clash(a, g): the answer a has a letter, word or command that the gold g has only in another case
-- ('n^2+1' for N^2+1, '\Pi' for \pi, '2Xyz' for 2xyz): another variable or constant, which the
-- identical-text shortcut (lower case) and math-verify would both pay. Runs on
-- symbolic rows only (verify.sql).
CREATE OR REPLACE MACRO letters(s) AS list_distinct(regexp_extract_all(regexp_replace(strip_name(s),
    '\\mathbb\s*\{[^{}]*\}|\\(?:text\w*|math(?:rm|sf|tt|it|bf)|mbox|hbox|boldsymbol|bm|operatorname)(?:[^a-zA-Z]|$)|\\[bB]igg?[lrm]?(?:[^a-zA-Z]|$)', ' ', 'g'),
    '\\[A-Za-z]+|\b[A-Z]?[a-z]{2,}\b|[A-Za-z]'));
CREATE OR REPLACE MACRO case_clash(a, gl, gll, gupper) AS  -- gl: letters(gold), gll: the same lower-cased, gupper: the gold has a capital
    CASE WHEN regexp_matches(a, '[A-Z]') OR gupper
         THEN COALESCE(list_bool_or(list_transform(letters(a), lambda t: NOT list_contains(gl, t) AND list_contains(gll, lower(t)))), false)
         ELSE false END;

-- hedged(x): x (lower case, norm_latex'ed, spaces kept) joins two answers by 'or' or by \approx, ~,
-- \to, arrows or \implies: several final values, one of them to be picked by the grader ('12 \approx
-- 13', '2\sqrt{3} \text{ or } 3'). An equals sign is judged apart (verify.sql: only 'x = value').
CREATE OR REPLACE MACRO hedged(x) AS regexp_matches(x,
    '\bor\b|\\approx|≈|~|\\sim(?:[^a-z]|$)|\\to(?:[^a-z]|$)|→|->|=>|⇒|\\implies|\\(?:long)?rightarrow|\\lor(?:[^a-z]|$)|\\vee'
    || '|\\pm|\\mp|±|∓|\\equiv|≡|\S\s*\\q?quad\s*[^\s)\]}]');
