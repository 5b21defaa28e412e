-- Symbolic golds: whether an answer is in the gold's form before math-verify compares the two (math-verify
-- evaluates what it reads, so an unevaluated or unsimplified form would be paid). verify.sql's not_value reads
-- them; the forms, with examples: docs/verifiers.md ("an answer is a value"). Tests:
-- tests/unit/verify/sql/test_symbolic.py (a table per macro), tests/unit/verify/test_verify.py (through the pass).

-- looks_symbolic(n): n (normalised) needs a symbolic checker (LaTeX, powers, brackets, relations, '2x', '1,2',
-- 'x+1', 'x-y'); plain words ('paris', 'new-york') do not.
CREATE OR REPLACE MACRO looks_symbolic(n) AS
    regexp_matches(n, '[\\^{}_()\[\]=<>*/|!]|sqrt|pi|inf|[0-9][a-z]|[a-z][0-9]|[0-9.][+-]|[0-9],[0-9]|[a-z0-9)]\+|(?:^|[^a-z])[a-z]-|-[a-z](?:[^a-z]|$)');

-- text_words(x): a word inside \text{} and its kin, which math-verify does not read ('2\sqrt{3} \text{ else } 3').
CREATE OR REPLACE MACRO text_words(x) AS
    regexp_matches(x, '\\(?:text\w*|math(?:rm|sf|tt|it|bf)|mbox|hbox|operatorname)\s*\{(?:[^{}\\]|\\[,;:! ])*(?:[A-Za-z]|[\[\]()<>=+,;|\d%])');

-- unsimplified(n): n (normalised) is a closed form with a step still to take, which math-verify would pay for
-- its simplified form: a fraction that cancels, in a fraction, over 1 or over a negative number; the root of a
-- perfect power; a function of 0 or 1; a step that changes nothing (its 1 or 0 also as 1.0, 0.0); a decimal in
-- a root or a fraction; literals multiplied beside a symbol; a power of three digits or a power in a power
-- (math-verify would time out). A radical with a square factor ('\sqrt{12}') is another closed form, and is
-- paid. Each check runs only on a text that holds its command (CASE). Literal wrappers are read as the literal first ('{(2)}').
CREATE OR REPLACE MACRO frac_terms(n) AS  -- each \frac{a...}{b...} whose parts open with integers:
    -- {a, ap: a '^' after a, neg: '-' before b, b, bp: a '^' after b}
    list_transform(regexp_extract_all(n, '\\[dtc]?frac\{-?\d{1,18}(?:[^{}+-]|\{[^{}]*\})*\}\{-?\d{1,18}(?:[^{}+-]|\{[^{}]*\})*\}'),
        lambda m: regexp_extract(m, '^\\[dtc]?frac\{-?(\d+)(\^?)(?:[^{}+-]|\{[^{}]*\})*\}\{(-?)(\d+)(\^?)', ['a', 'ap', 'neg', 'b', 'bp']));
CREATE OR REPLACE MACRO unsimplified(n0) AS
    CASE WHEN contains(n0, 'frac') OR contains(n0, '/') THEN
        COALESCE(list_bool_or(list_transform(frac_terms(regexp_replace(n0, '\{[({](-?\d+)[)}]', '{\1', 'g')),
                 lambda t: t.neg = '-' OR (t.ap = '' AND t.bp = '' AND gcd(TRY_CAST(t.a AS HUGEINT), TRY_CAST(t.b AS HUGEINT)) <> 1)
                           OR TRY_CAST(t.b AS HUGEINT) = 1)), false)
        OR COALESCE(list_bool_or(list_transform(
               regexp_extract_all(n0, '(?:^|[^\w.^}])\d{1,18}(?:\\[a-z]+(?:\{[^{}]*\})?|[a-z])*/\d{1,18}(?:$|[^\d.^])'),
               lambda m: gcd(TRY_CAST(regexp_extract(m, '(\d+)\D*/', 1) AS HUGEINT), TRY_CAST(regexp_extract(m, '/(\d+)', 1) AS HUGEINT)) <> 1
                         OR TRY_CAST(regexp_extract(m, '/(\d+)', 1) AS HUGEINT) = 1)), false)
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
                      || '|\^(?:\{1(?:\.0+)?\}|1(?:\.0+)?)(?:$|[^\d./])|(?:\\cdot|\\times|\*)1(?:\.0+)?(?:$|[^\d.])'
                      || '|(?:^|[^\d.])1(?:\.0+)?(?:\\cdot|\\times|\*)'
                      || '|(?:^|[-+(=,{\[])1(?:[a-z](?:[^a-z]|$)|\\(?:sqrt|pi|sin|cos|tan|log|ln))|[-+]0(?:\.0+)?(?:$|[^\d.])|\\div|÷|\\over(?:$|[^a-z])'
                      || '|\d(?:\\cdot|\\times|\*|×|·|⋅)(?:-?\d+(?:$|[^\d^.])|\\[dtc]?frac)|(?:^|[^\w.^{])\d+\(-?\d|\^\s*\{?\s*-?\d{3,}|\^\s*\{[^{}]*\^'
                      || '|(?:^|[^\d.])1\^|\\(?:sqrt|[dtc]?frac)(?:\[\d+\])?\{[^{}]*\d\.\d|\\[dtc]?frac\{[^{}]*\}\{[^{}]*\d\.\d');

-- ops_beyond(a, g): the answer a applies a kind of operation the gold g has none of (trigonometry, logarithms
-- and exponentials, gamma, floor or ceiling, absolute values, max or min, set operations). a: the answer lower-cased
-- with its spaces ('\sin x': norm_answer would make it '\sinx'), g: the normalised gold.
CREATE OR REPLACE MACRO ops_beyond(a, g) AS
    (regexp_matches(a, '\\(?:a(?:rc)?)?(?:sin|cos|tan|sec|csc|cot)h?(?:[^a-z]|$)') AND NOT regexp_matches(g, '\\(?:a(?:rc)?)?(?:sin|cos|tan|sec|csc|cot)'))
    OR (regexp_matches(a, '\\(?:log|ln|lg|exp)(?:[^a-z]|$)') AND NOT regexp_matches(g, '\\(?:log|ln|lg|exp)|e\^'))
    OR (regexp_matches(a, '\\(?:gamma|lfloor|lceil|max|min)(?:[^a-z]|$)|\\operatorname\{(?:max|min|floor|ceil)')
        AND NOT regexp_matches(g, '\\(?:gamma|lfloor|lceil|max|min)|\\operatorname'))
    OR (regexp_matches(a, '\||\\[lr]?vert') AND NOT regexp_matches(g, '\||\\[lr]?vert'))
    OR (regexp_matches(a, '\\(?:cup|cap|setminus|emptyset|varnothing)|∅|∪|∩')
        AND NOT regexp_matches(g, '\\(?:cup|cap|setminus|emptyset|varnothing)|∅|∪|∩'));

-- strip_name(s): s without a name in front of its value ('x =', 'f(x) =', 'a_{n} =', 'AB =', '\theta =', 'x \in',
-- '\frac{dy}{dx} =', '\text{Area} ='): a letter, two to four capitals, a Greek letter or one of these forms; a
-- word ('not =') or another command ('\sqrt{13} =') is no name. Raw or normalised text.
CREATE OR REPLACE MACRO strip_name(s) AS regexp_replace(s,
    '^\s*(?:(?:m\s*)?(?:[A-Za-df-z]|[A-Z]{2,4}|\\(?:[aA]lpha|[bB]eta|[gG]amma|[dD]elta|epsilon|zeta|eta|[tT]heta|kappa|[lL]ambda|mu|nu|[xX]i|[pP]hi|rho|[sS'
        || ']igma|tau|[oO]mega|[pP]si|chi)(?:\s*[A-Za-z])?'
    || '|\\(?:angle|overline|triangle)\s*\{?\s*[A-Z]{1,3}\s*\}?|\\(?:mathbf|vec|boldsymbol)\s*\{?\s*[A-Za-z]\s*\}?)\s*(?:_\s*(?:\{[^{}]*\}|\w))?\s*(?:\^\s*'
        || '\{[^{}]*\}|'')?\s*(?:\([^()]*\))?'
    || '|\([A-Za-z,\s]+\)|\\[dt]?frac\s*\{\s*d\w*\s*\}\s*\{\s*d\w*\s*\}|\[[A-Z]{2,4}\]|\|[A-Z]{2,4}\||\\text\s*\{\s*[A-Z][a-z]+(?:\s+[a-z]+)?\s*\}'
    || '|\\(?:sin|cos|tan|sec|csc|cot)\s*(?:\^\s*\{?\d\}?)?\s*(?:\\(?:alpha|beta|gamma|theta|phi)|[A-Za-z]))'
    || '\s*(?:=|\\in\b)\s*', '');

-- value_atoms(s): how many values s (norm_latex'ed) is written with: numbers, letters and commands other than
-- layout, operators and relations, a name in front left out. More than one more than the gold's is not its
-- form ('x^2+1+x-x'); '(x-1)(x+1)' for x^2-1 is within one.
CREATE OR REPLACE MACRO value_atoms(s) AS len(regexp_extract_all(
    regexp_replace(regexp_replace(strip_name(s), '(?:^|[^A-Za-z\\])(?:and|or)(?:[^A-Za-z]|$)', ' ', 'g'),
        '\\(?:left|right|[bB]igg?[lrm]?|[dtc]?frac|cdot|times|[lg]eq?|[lg]eqslant|[lg]t|neq?|in|cup|cap|setminus|displaystyle|textstyle|q?quad|hspace|text\'
            || 'w*|math(?:rm|bf|it|sf|tt)|boldsymbol|bm|mbox|operatorname|limits)\b|\\[,;:! ]',
        ' ', 'g'),
    '\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]'));

-- unevaluated(n): n (normalised) holds arithmetic still to evaluate: an operator between two literal numbers
-- ('3*4', 'x^2+2-1'; '2+3\sqrt{2}' is a value), an integer power of an integer, a factorial, \binom, sums,
-- products, integrals, limits, a power of a bracket of numbers, matrix arithmetic, a radical in a sum in a
-- denominator; or is unsimplified. A fraction a/b is a number.
-- dec_places(n): the most decimal places of a number in n, trailing zeros aside ('(0.5000004, 3)': 7).
CREATE OR REPLACE MACRO dec_places(n) AS
    COALESCE(list_max(list_transform(regexp_extract_all(n, '\.(\d*[1-9])', 1), lambda d: length(d))), 0);
CREATE OR REPLACE MACRO unevaluated(n) AS regexp_matches(
    -- a literal in braces or brackets after an operator is the literal ('\cdot{3}', '+(-1)', '{(1)+2}')
    regexp_replace(n, '(^|[-+*/=^(\[{,×·÷]|\\cdot|\\times|\\div)[{(](-?\d+(?:\.\d+)?)[})]', '\1\2', 'g'),
    '(?:^|[-+*/=(\[{,;&<>≤≥×·÷\\]|\\cdot|\\times|\\div|\\q?quad|\\[lg]eq?|\\[lg]t|\\begin\{[a-z]*matrix\})(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})'
    || '(?:[-+*×·÷]|\\cdot|\\times|\\div)(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})'
    || '(?:$|[-+*/=)\]},;&<>×·÷]|\\(?:\d|end|\}|\]|q?quad)|\\cdot|\\times|\\div|or)'
    || '|(?:^|[^\w.}])\d+\^(?:\d|\{\d+\})|[\d)}]!|\\d?binom|\\choose|\\sum|\\prod|\\int|\\lim'
    -- a bracket of numbers to a power ('(1+\sqrt{2})^2'; '(2x-3)^2' is factored), any bracket to a power of two
    -- digits, a scalar before a matrix, a transpose, a product of matrices, '\frac{1}{3-2\sqrt{2}}'
    || '|\((?:[-+*/.\d]|\\sqrt\{\d+\}|\\cdot|\\times)+\)\^\{?-?\d|\)\^\{?\d\d|(?:^|[^&\\{])[-\d]\\begin\{[a-z]*matrix\}'
    || '|\\end\{[a-z]*matrix\}(?:\^|(?:\\cdot|\\times|\*)?\\begin)|\\[dt]?frac\{[^{}]*\}\{[^{}]*(?:[-+][^{}]*\\sqrt|\\sqrt\{\d+\}[-+])')
    OR unsimplified(n);

-- unit_word(w): w (one or two words) is a unit of a fixed list (length, area, volume, mass, time, money,
-- physics, 'units', radians; a single letter only as the case-exact m, s, g, N, J, W, V). Not degrees, scale
-- words or anything that hedges.
CREATE OR REPLACE MACRO unit_word(w) AS regexp_full_match(w, '[msgNJWV]') OR regexp_full_match(lower(w),
    '(?:(?:square|sq\.?|cubic|cu\.?)\s+)?(?:mm|cm|dm|km|in|inch|inches|ft|foot|feet|yd|yds|yard|yards|mi|mile|miles|'
    || '(?:milli|centi|deci|kilo)?(?:meter|metre)s?|mg|kg|grams?|kilograms?|lbs?|pounds?|oz|ounces?|tons?|tonnes?|'
    || 'sec|secs|seconds?|min|mins|minutes?|hr|hrs|hours?|days?|weeks?|months?|years?|'
    || 'dollars?|cents|euros?|units?|newtons?|joules?|watts?|volts?|amps?|amperes?|pa|pascals?|'
    || 'hz|hertz|coulombs?|kelvin|mol|moles?|ml|liters?|litres?|milliliters?|millilitres?|rad|radians?)\.?');

-- unit_power(): a unit_word's optional square or cube, also in its own math span ('cm^2', '\text{ cm}^{2}', 'cm$^2$').
CREATE OR REPLACE MACRO unit_power() AS '(?:\$?\s*\^\s*\{?[23]\}?\$?)?';

-- qualifier_pattern(): an integer qualifier at the end of an answer (', k \in \mathbb{Z}', '\text{ for integer } k').
CREATE OR REPLACE MACRO qualifier_pattern() AS
    '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mat'
    || 'hbb\s*\{?Z\}?\s*\)?\s*$|\s*\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$';
-- value_tail(x): x (raw) without a unit after its value (\text{ cm}^2: unit_word) or an integer qualifier whose
-- letter it has (', k \in \mathbb{Z}'); x as it is otherwise (other words hedge or change the answer).
CREATE OR REPLACE MACRO value_tail(x) AS
    CASE WHEN NOT regexp_matches(x, '\\(?:text|mathrm|mbox|in)') THEN x  -- (the common case, one cheap test)
         WHEN regexp_matches(x, '[\d}\w)]\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{\s*[a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?\s*\}'
             || unit_power() || '\s*$')
              AND unit_word(regexp_extract(x, '\{\s*([a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?)\s*\}' || unit_power() || '\s*$', 1))
         THEN regexp_replace(x, '\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}' || unit_power() || '\s*$', '')
         WHEN regexp_matches(x, qualifier_pattern())
              AND contains(regexp_replace(x, qualifier_pattern(), ''), regexp_extract(x, '([kmn])\s*(?:\\in\s*\\mathbb\s*\{?Z\}?\s*\)?)?\s*$', 1))
         THEN regexp_replace(x, qualifier_pattern(), '')
         ELSE x END;

-- uni_math(x): Unicode math as LaTeX ('5√2' -> '5\sqrt{2}', '∛2', 'x²', '½'), which math-verify does not read.
CREATE OR REPLACE MACRO uni_math(x) AS
    CASE WHEN regexp_matches(x, '[√∛⁰¹²³⁴⁵⁶⁷⁸⁹⁻½⅓⅔¼¾]')
         THEN translate(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                  replace(replace(replace(replace(replace(x, '½', '\frac{1}{2}'), '⅓', '\frac{1}{3}'), '⅔', '\frac{2}{3}'),
                          '¼', '\frac{1}{4}'), '¾', '\frac{3}{4}'),
                  '([⁰¹²³⁴⁵⁶⁷⁸⁹])√\s*(\d+|[A-Za-z])', '\\sqrt[\1]{\2}', 'g'),
                  '√\s*\(([^()]*)\)', '\\sqrt{\1}', 'g'), '√\s*(\d+|[A-Za-z]|\\pi)', '\\sqrt{\1}', 'g'),
                  '∛\s*(\d+|[A-Za-z])', '\\sqrt[3]{\1}', 'g'), '(^|[^\[⁰¹²³⁴⁵⁶⁷⁸⁹⁻])(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)', '\1^{\2}', 'g'),
              '⁻⁰¹²³⁴⁵⁶⁷⁸⁹', '-0123456789')
         ELSE x END;

-- eq_computed(x): the side before x's last '=' holds an operation the last side is the value of (an integral,
-- sum, limit, function, binomial, factorial, product of brackets, power, \cdot, a root of a sum or with a square
-- factor), so the last side is the answer ('\sqrt{72} = 6\sqrt{2}'); 'x = 2\sqrt{3} = 3\sqrt{2}' stays several
-- values. A false computation is not checked.
CREATE OR REPLACE MACRO eq_computed(x) AS list_transform([regexp_extract(x, '([^=]*)=[^=]*$', 1)], lambda side:  -- (bound once)
    regexp_matches(side,
        '\\(?:int|iint|oint|sum|prod|lim|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|log|ln|exp|binom)(?:[^A-Za-z]|$)'
            || '|\)\s*\(|\d\s*\^|\}\s*\^|\)\s*\^|!|\\cdot|\\times|\\sqrt\s*(?:\[[^\]]*\])?\s*\{[^{}]*[-+^*]|\\[dt]?frac\s*\{[^{}]*[-+]')
    OR list_bool_or(list_transform(regexp_extract_all(side, '\\sqrt\s*\{\s*(\d{1,9})\s*\}', 1),
                                   lambda n: list_bool_or(list_transform(range(2, 32), lambda k: CAST(n AS BIGINT) % (k * k) = 0)))))[1];

-- set_shape(n): 'set' for values in braces, 'tuple' for values in brackets, 'list' for values without any, ''
-- else; a name in front and spacing left out. Three shapes: math-verify would pay '\{0, 1\}' and '0, 1' for (0, 1).
CREATE OR REPLACE MACRO shape_of(x) AS
    CASE WHEN NOT regexp_matches(x, '[,;]') THEN ''
         WHEN regexp_full_match(x, '(?:\\left)?\\\{(?:[^\\]|\\[^{}])*[,;](?:[^\\]|\\[^{}])*(?:\\right)?\\\}|\{[^{}]*[,;][^{}]*\}') THEN 'set'
         WHEN regexp_full_match(x, '(?:\\left)?(?:[(\[]|\\langle)[^()\[\]]*[,;][^()\[\]]*(?:\\right)?(?:[)\]]|\\rangle)') THEN 'tuple'
         WHEN NOT regexp_matches(x, '^(?:\\left)?(?:[(\[{]|\\\{|\\langle)') THEN 'list'
         ELSE '' END;
CREATE OR REPLACE MACRO set_shape(n) AS shape_of(regexp_replace(strip_name(n), '\\displaystyle|\\textstyle|\\q?quad|\\hspace\{[^{}]*\}', '', 'g'));

-- letters(s): what names a variable or constant in s, case kept: letters, words, commands; a name in front,
-- \mathbb{} and sizing commands left out, \text{} read through.
-- case_clash(a, ...): the answer has a letter, word or command the gold has only in another case ('n^2+1' for
-- N^2+1, '\Pi' for \pi): another variable, which the lower-case shortcut and math-verify would both pay.
CREATE OR REPLACE MACRO letters(s) AS list_distinct(regexp_extract_all(regexp_replace(strip_name(s),
    '\\mathbb\s*\{[^{}]*\}|\\(?:text\w*|math(?:rm|sf|tt|it|bf)|mbox|hbox|boldsymbol|bm|operatorname)(?:[^a-zA-Z]|$)|\\[bB]igg?[lrm]?(?:[^a-zA-Z]|$)', ' ', 'g'),
    '\\[A-Za-z]+|\b[A-Z]?[a-z]{2,}\b|[A-Za-z]'));
CREATE OR REPLACE MACRO case_clash(a, gl, gll, gupper) AS  -- gl: letters(gold), gll: the same lower-cased, gupper: the gold has a capital
    CASE WHEN regexp_matches(a, '[A-Z]') OR gupper
         THEN COALESCE(list_bool_or(list_transform(letters(a), lambda t: NOT list_contains(gl, t) AND list_contains(gll, lower(t)))), false)
         ELSE false END;

-- hedged(x): x (lower case, norm_latex'ed) joins two answers by 'or', \approx, ~, \to, arrows, \pm or \quad
-- (a \quad after a comma or semicolon is spacing inside a list: '(0,\quad 1)').
CREATE OR REPLACE MACRO hedged(x) AS regexp_matches(x,
    '\bor\b|\\approx|≈|~|\\sim(?:[^a-z]|$)|\\to(?:[^a-z]|$)|→|->|=>|⇒|\\implies|\\(?:long)?rightarrow|\\lor(?:[^a-z]|$)|\\vee'
    || '|\\pm|\\mp|±|∓|\\equiv|≡|[^\s,;]\s*\\q?quad\s*[^\s)\]}]');
