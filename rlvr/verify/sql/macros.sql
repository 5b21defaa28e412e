-- Answer normalisation shared by every verifier query (run once per connection by rlvr.verify.connect).
-- Every rule has true and false rows in tests/test_verify.py.
--
-- norm_latex(s): \text{..}, \textbf{..}, \textrm{..}, \mathrm{..}, \mbox{..} replaced by their contents,
-- a space each side, and \frac12 spelled \frac{1}{2}; a pass of its own, before whitespace is
-- removed (run in the same pass, the contents' own spaces survived it: '5\text{ cm}' was '5 cm',
-- never equal to '5cm'; issue 19). A \boxed{..} inside the tag (up to five levels of braces) is
-- its contents, and so is a box inside that box (two passes: '\boxed{\boxed{12}}' is 12); the math
-- delimiters \( \) \[ \] are dropped: '<answer>\boxed{12}</answer>' and '\(12\)' are 12. An answer that is all markdown bold or code ('**12**', '`12`') is its contents,
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
--   degrees (^\circ, ^{\circ}, °) and LaTeX spaces (\, \! \; \:) dropped, '{,}' read as ',' ('10{,}000'); unicode minus U+2212 -> '-'; currency signs $ € £ and LaTeX
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

-- plain_decimal(s): s is a plain decimal ('42', '-3.5', '007'): digits, an optional '-' and one point
-- with digits after it; norm_answer leaves such a text as it is, so a gold or an answer in this form
-- skips normalisation (verify.sql: the golds' and the answers' fast path, one pattern for both).
CREATE OR REPLACE MACRO plain_decimal(s) AS regexp_full_match(s, '-?\d+(?:\.\d+)?');

-- last_number_text(): the pattern of one number as the last-number reading takes it (verify.sql tail
-- and last_num: one pattern for both): a LaTeX fraction of integers ('\frac{1}{2}' is one number, and
-- '3\frac{1}{2}' a mixed one, as is '3 1/2'), a repeating decimal ('0.333...', '0.\bar{3}'), or
-- digits with thousands commas, a decimal or repeating decimal ('12.\overline{3}'), a fraction a/b and %.
-- A constant: DuckDB folds it and compiles the regex once.
CREATE OR REPLACE MACRO last_number_text() AS
    '(?:[-−]?(?:\d+\s*)?\\[dt]?frac\{\d+\}\{\d+\}|[-−]?\\[dt]?frac\d\d|[-−]?\d+\s+\d+/\d+|[-−]?[1-9]\d{0,2}(?:(?:\\,|\{,\}|,|[ \x{202F}\x{A0}])\d{3})+(?:\.\d+)?|[-−]?\d*\.\d*(?:000+|111+|222+|333+|444+|555+|666+|777+|888+|999+)(?:\.{3}|…)'
    || '|[-−]?\d+(?:,\d{3})*(?:\.\d*\\(?:overline|bar|dot)\{\d+\}|\.\d+)?(?:/\d+)?%?|[-−]?\.\d+%?)';

-- ctx_lead(s), ctx_trail(s): the text before and after an answer, as number_denied, value_prefix and
-- value_suffix read it: without the markup around the answer ('**12** or **13**', '\(12\) or \(13\)', `12`,
-- '$12$ thousand', 'about *12*', 'about \textbf{12}', '**12** is wrong'; a '**' between a digit and the
-- answer is Python's power, 'x = 2**3', and stays). One pair for every answer
-- verify.sql reads in context: the last number (its 48 characters before, the text after it) and a tag
-- or box (the same around it).
CREATE OR REPLACE MACRO ctx_lead(s) AS
    regexp_replace(s, '(^|[^\d])\*\*+|(\d)\*\*+([^\d])|\\[()\[\]]|`|\$|(?:^|\s)[*_]+$|\\(?:textbf|mathbf|boldsymbol|bm|text|mathrm|mbox)\s*\{$|</?[A-Za-z][^<>]*>|(?:^|\n)[ \t]*>[ \t]*(?:\$|\\[(\[])*[ \t]*$|(?:\\[,;:! ])+\s*$', '\1\2\3', 'g');
CREATE OR REPLACE MACRO ctx_trail(s) AS
    regexp_replace(s, '^(?:\*+|_+|\$|\\\)|`|\}|\s*\\[,;:! ]|\s*~)+|\\(?:text\w*|mathrm|mbox)\s*\{', '', 'g');

-- digit_gap(x): x splits digits by spacing (whitespace, LaTeX \, \; \: \! '\ ' or ~) other than
-- thousands grouping, so it holds several numbers where norm_answer, which removes spacing, would
-- read one: '1 2' is not 12, '12 13' not 1213, '10 00' and '1 0 0 0' not 1000 (issue 19, round 3's red
-- team). A grouped number is one: a first group of one to three digits, not starting with 0, then
-- groups of exactly three ('1 000', '1\,000\,000', '12 345.5'; '0 012' is two). The costly check runs only on texts with a gap (CASE).
CREATE OR REPLACE MACRO digit_gap(x) AS
    CASE WHEN regexp_matches(x, '\d(?:\s|\\[,;:! ]|~)+\d')
         THEN regexp_matches(regexp_replace(x, '(^|\D)[1-9]\d{0,2}(?:(?:\s|\\[,;:! ]|~)+\d{3})+(\D|$)', '\1#\2', 'g'),
                             '[\d#](?:\s|\\[,;:! ]|~)+\d')  -- '#': a grouped number, which a digit may not follow either
         ELSE false END;

-- value_suffix(after): what directly follows a last number read from the text changes its value, so
-- that number is not the answer: a superscript (a power, '12²'), a vulgar fraction ('12½'), per
-- mille ('12‰'), a scale ('12k', '12M', '12 thousand'), a power word ('12 squared') or a part
-- ('12 and a half') (issue 19, round 3:
-- each was paid as 12). A unit ('12 apples', '12 cm') changes nothing.
-- value_prefix(lead): the same before it (lead lower-cased): a sign or a root in words or symbols
-- ('minus 13', 'negative 13', '√13', '\sqrt{13}', 'the square of 13'), a bound ('x < 13', 'at least
-- 13', 'up to 13'), as the tag's answer in words refuses them (an approximation, 'about 13', '~13', is
-- approx_prefix's: round 13);
-- or it is no value of its own: a denominator ('\frac{\pi}{2}'), a second argument ('\binom{10}{3}'), an
-- exponent ('2^{10}', '1.9e1'), a subscript, an operand ('3 x 10', '3 − 10', '3\times{10}', '3 times 10',
-- '5 mod 3', '3 out of 10'), or an alternative in words ('twelve or 13') (issue 19, round 8); round 9: operands
-- and arguments in words and TeX ('10 plus 2', '24 divided by 2', '4 over 2', '{1 \over 2}', '\log 3', 'ln 3',
-- 'sqrt of 12'), more bounds ('\leqslant', '⩽', 'over', 'below', 'close to', 'in excess of'), multiples
-- ('twice 12', 'half of 50', '12% of 50'), a brace-less '\frac12', and a sign that is no ASCII minus or
-- stands apart ('–12', '－12', 'is - 12'; a bullet '\n- 12' and '3 - 12' are not signs).
-- value_suffix, round 9: 'lakh', 'bn', 'tenths', 'halves', '12 to the second', '12+', '12ish', '12-odd', '12 and
-- up', '12 at most', '12 give or take', '12 score' at the end.
-- answer_name(has_tag, tag_body, boxed): how a reason names the one tag or box ('the tagged answer, 12').
CREATE OR REPLACE MACRO answer_name(has_tag, tag_body, boxed) AS
    'the ' || CASE WHEN has_tag THEN 'tagged' ELSE 'boxed' END || ' answer, ' || trim(CASE WHEN has_tag THEN tag_body ELSE boxed END);
-- approx_link(): what joins a number to its approximation ('1/3 \approx 0.333', '\pi \cdot 3^2 \approx 28.27';
-- verify.sql: decided with the gold, as approx_prefix is). A constant, compiled once.
CREATE OR REPLACE MACRO approx_link() AS '\s*(?:\\approx|≈|~|\\sim|\\simeq|≃)\s*';
-- abbrev(): an abbreviation whose full stop ends no sentence ('approx.', 'ca.', 'est.', 'abt.', 'no.', 'vs.';
-- verify.sql's contexts: a lead that ends in one is still read). A constant.
CREATE OR REPLACE MACRO abbrev() AS '(?i)\b(?:approx|ca|est|abt|no|vs)\.';
-- correction_cue(): a cue that opens a clause after a tag or box and may correct it ('Wait,', 'Edit:', 'my mistake',
-- 'it should be', 'no,'; verify.sql's correction compares the number after it with the answer). A constant.
CREATE OR REPLACE MACRO correction_cue() AS '(?i)(?:^\s*|[.!?\n(:;]\s*|,\s*)(?:(?:(?:no\s+)?wait|oops|hmm|sorry|edit|update|correction|erratum|typo|actually|my\s+(?:mistake|bad)|on\s+second\s+thought|scratch\s+that|i\s+meant?|make\s+that|(?:the\s+)?(?:correct\s+|real\s+|right\s+|final\s+)?answer\s+(?:should|must)\s+(?:be|have\s+been)|(?:it|that|this)\s+should\s+(?:be|have\s+been))\b|no[,!:])';
-- approx_prefix(lead): an approximation before the answer ('about 28.27', '\approx 28.27', '~28.27', 'roughly',
-- 'circa', or such a word in the clause before it: 'Approx. answer:', 'Estimated answer:'; a LaTeX tie 'is~12' is
-- none). verify.sql pays it only for a gold that is itself a decimal with places (a rounded value: 'to the
-- nearest hundredth'), never for an integer or symbolic gold ('about 12' is a hedge; round 13).
CREATE OR REPLACE MACRO approx_prefix(lead) AS
    regexp_matches(lead, '(?:\b(?:about|approximately|approx\.?|around|roughly|circa|an\s+approximate|ca\.|in\s+the\s+ballpark\s+of|more\s+or\s+less|approximately\s+equal\s+to)|(?:^|\s)~|≈|\\approx|\\sim|\\simeq|≃)\s*$'
                         || '|\b(?:approx\.|approx\b|approximately\b|roughly\b|estimated\s+answer\b|an\s+estimate\b|ballpark\b|circa\b|ca\.)[^.!?\n\d]{0,30}$');
CREATE OR REPLACE MACRO value_prefix(lead) AS (regexp_matches(lead,
    '(?:\bminus|\bnegative|\bneg|√\s*\(?|∛|\\sqrt\s*(?:\[[^\]]*\])?\s*\{?|\bsqrt\s*(?:\(|of)?|\b(?:the\s+)?(?:square|cube|square\s+root|cube\s+root|root|log|logarithm|opposite|negative|reciprocal|inverse)\s+of|<|(?:^|[^=a-z>-])>|≤|≥|⩽|⩾|≦|≧|≲|≳|\\[lg]eqq?(?:slant)?|\\[lg]t|\\lesssim|\\gtrsim|\\ll|\\gg|\bat\s+(?:least|most|best|worst|minimum|maximum|the\s+(?:very\s+)?(?:least|most))|\b(?:a\s+)?(?:minimum|maximum)\s+of|\b(?:more|less|fewer|greater|smaller)\s+than|\bup\s+to|\b(?:nearly|almost|over|above|below|under|near|beyond|exceeding|exceed|exceeds|hardly|barely)|\bclose\s+to|\bfar\s+from|\bin\s+excess\s+of|\bupwards\s+of|\bneighbou?rhood\s+of|\bvicinity\s+of|\bgive\s+or\s+take|\b(?:a|one)[\s-](?:power|fraction|percentage|tenth|fourth|fifth)\s+of|\b\d+\s+(?:tenth|fourth|fifth|third|quarter)s?\s+of|\border\s+of|\bsomething\s+like|\bshy\s+of|\ban\s+estimated|\b(?:north|south)\s+of|\bbounded\s+by|\bcomplement\s+of|\bcapped\s+at|\b(?:a\s+)?(?:multiple|factor|divisor)\s+of|\bdivisible\s+by|⪆|⪅|\de[-+]?'
    || '|\\[dtc]?frac\s*\{[^{}]*\}\s*\{|\\[dtc]?frac\s*\d?|[⁄∕]|\\binom\s*\{[^{}]*\}\s*\{|\^\s*\{?|_\s*\{?|\*\*'
    || '|\d\s*[cp]|[-−]\s*(?:\\left)?\(\s*|\(-1\)\s*\(\s*|\bhalf|\bfalls\s+short\s+of|\bguess(?:\s+would\s+be)?\s*:?|\\over|\\bmod|\\pmod\s*\{?|\\(?:log|ln|lg|exp|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh)(?:_\s*\{?\d*\}?)?\s*[({]?|\b(?:log|ln|sin|cos|tan)\s*\(?'
    || '|\d\s*[x×⋅•·−]|(?:\\times|\\cdot|\\div)\s*\{?|\b(?:times|mod|out\s+of|plus|divided\s+by|multiplied\s+by|to\s+the\s+power\s+of|raised\s+to(?:\s+the\s+power\s+of)?|twice|double|triple|thrice|half\s+of|third\s+of|quarter\s+of)|%\s+of|\d\s*/\s*\d+\s+of|\b(?:one|two|three|four|a)\s+(?:third|quarter|fourth|fifth|sixth|eighth|tenth)s?\s+of|\b(?:percent|groups?)\s+of'
    || '|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|dozen)\s+or'
    -- a minus standing apart after 'is', '=' or ':' ('is - 12'; not a bullet '\n- 12', not '3 - 12': number_hedge)
    || '|(?:\bis|\bequals?|\bbe|\bwas|=|:)[^\S\n]*[-−][^\S\n]+)\s*$')
    -- a sign that is not ASCII, touching the number ('–12', '－12'; 'The answer – 12' is a dash)
    OR regexp_matches(lead, '[–‐‒－﹣]$'))
    AND NOT regexp_matches(lead, '\b(?:adds?|added|adding|sums?|summed|comes?|came|totals?|totalled|rounds?|rounded|rounding|brings?|brought|bringing)\b(?:\s+\w+){0,3}\s+up\s+to\s*$');  -- 'they add up to 12', 'rounds up to 12'
CREATE OR REPLACE MACRO value_suffix(after) AS regexp_matches(after,
    '^(?:\s*[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒‰‱₀₁₂₃₄₅₆₇₈₉]|!\$|\s*\^\s*\{?\s*[\w(]|[kKMB]\b|\+|-?ish\b|-odd\b|(?:st|nd|rd|th)\b|[''’]s\s+(?i:square|cube|root|double|half|inverse|reciprocal|negative|opposite)'
    || '|[\s,(]*(?i:hundred|thousand|million|billion|trillion|dozen|lakh|crore|bn|mn|squared|cubed|factorial|and\s+(?:a|one|two|three)\s+(?:half|quarters?|thirds?)|-?plus|and\s+counting|estimated|est\.?'
    || '|at\s+(?:a\s+)?(?:minimum|maximum)|at\s+the\s+outside|score\s+years|(?:lower|upper)\s+bound|too\s+(?:many|few|much|little)|with\s+the\s+opposite\s+sign'
    || '|doubled|halved|tripled|quadrupled|negated|inverted|halves|thirds|(?:four|fif|six|seven|eigh|nin|ten|eleven|twelf|\w+teen|\w+tie|hundred|thousand)ths'
    || '|to\s+the\s+(?:second|third|power|\w+th)|and\s+(?:up|above|over|more|higher|beyond|upwards?)|at\s+(?:the\s+)?(?:minimum|maximum|most|least)'
    || '|give\s+or\s+take|or\s+so|thereabouts|and\s+change|(?:hundred|thousand|million|billion|dozen|lakh|crore)s|and\s+one\s+half|point\s+\w+'
    || '|(?:times|multiplied\s+by|divided\s+by|raised\s+to(?:\s+the\s+power\s+of)?)\s+(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+half)'
    || '|below\s+zero|under\s+par|in\s+(?:hexadecimal|hex|binary|octal|ternary)|in\s+base\s*(?:[2-9]|1[1-9]|[2-9]\d|two|three|four|five|six|seven|eight|nine|eleven|twelve|sixteen)|per\s+(?:thousand|mille|cent)|basis\s+points|bps|max|maximum|minimum|tops|plus'
    || '|and\s+(?:below|under|less|fewer|lower)|more\s+or\s+less|roughly|approx\.?|approximately|at\s+(?:the\s+very\s+)?(?:least|best))\b|-(?i:thousand|million|billion)\b|\s+K\b|\s+(?i:grand|gross)\b|\s+(?i:score)\W*$)');

-- prose_bound(lead, after): a bound word before the answer and a word after it read as prose, not a
-- bound ('jumped over 12 hurdles', 'over 12 months'; 'over 12 thousand' is still a scale): value_prefix's
-- exemption, for a last number and a tag or box alike (verify.sql).
CREATE OR REPLACE MACRO prose_bound(lead, after) AS
    regexp_matches(lower(lead), '\b(?:over|under|above|below|within)\s*$') AND regexp_matches(after, '(?i)^\s*[a-z]');
-- outer_operation(lead, after): the one tag or box is an operand of what is written around it, on its own
-- line (verify.sql contexts): an operator and a number after it ('\boxed{12} + 1', '\boxed{12} \cdot 10',
-- '</answer>–13', '\boxed{12}\times 10^3', '{\boxed{12} \over 5}'), digits that carry it on ('\boxed{12}.5',
-- '\boxed{12},000', '1\boxed{2}', '\boxed{12}e3'), a bracket raised to a power ('(\boxed{12})^2'), or a
-- division, numerator, \pm or absolute value before it ('1/\boxed{12}', '\frac{\boxed{12}}{5}', '\pm\boxed{3}',
-- '|\boxed{-3}|'), or what multiplies it ('\boxed{12}\pi', '\boxed{12}\frac{1}{2}') or a subscript ('\boxed{12}_3', a
-- base). Markdown after it is no operator ('\n**Explanation:**', '*dollars*', '/day').
CREATE OR REPLACE MACRO outer_operation(lead, after) AS
    (regexp_matches(after, '^(?:[^\S\n]*(?:\\pm|±|\\mp|∓|\\times|\\cdot|×|÷|\\div|\\over|\\bmod|\*|/|[-+−–—])[^\S\n]*[\d(\\{]|[.,]?\d|[eE][-+]?\d|[^\S\n]*(?:\\right)?[)\]][^\S\n]*\^|[^\S\n]*\{\}[^\S\n]*\^[^\S\n]*\{?[^\S\n]*[\w(]|(?:\\right)?\||\\rvert|[^\S\n]*\\(?:pi|sqrt|[dt]?frac)(?:\b|\d)|_)')
     -- (a dash in prose is no minus: '\boxed{12} — 3 packs of 4', '\boxed{12} - 4 pencils each')
     AND NOT regexp_matches(after, '^[^\S\n]*[-–—][^\S\n]+\d[\d,.]*[^\S\n]+[A-Za-z]{2,}'))
    OR (regexp_matches(lead, '(?:\d|\d[.,]|\||\\lvert|\\left\s*\|)$|[^\s=(:,$][-−]$|(?:\d\s+[-−]|/|\\[dtc]?frac\s*\{|\\pm|±|\\mp|∓)\s*$')
        AND NOT regexp_matches(lead, '(?i)\b(?:step|part|question|problem|case|item|no\.?|answer)\s*\d+\s*[-−–—]\s*$'));  -- ('Step 3 - \boxed{12}')
-- box_sign(lead): a minus before a box is its sign ('$-\boxed{12}$', 'is $- \boxed{12}$'), not a bullet ('\n- ') or
-- an operation ('x-\boxed{12}', '5^{-\boxed{12}}', '3 - \boxed{12}': outer_operation).
CREATE OR REPLACE MACRO box_sign(lead) AS regexp_matches(lead, '(?:^|[\s=(:,])[-−]$|[ \t=(:][-−][ \t]+$') AND NOT regexp_matches(lead, '\d\s*[-−]\s*$');

-- text_words(x): x holds a word (two letters or more) inside \text{}, \mathrm{} and their kin, where
-- math-verify does not read it ('2\sqrt{3} \text{ else } 3\sqrt{2}'); LaTeX commands inside are not words.
CREATE OR REPLACE MACRO text_words(x) AS
    regexp_matches(x, '\\(?:text\w*|math(?:rm|sf|tt|it|bf)|mbox|hbox|operatorname)\s*\{(?:[^{}\\]|\\[,;:! ])*(?:[A-Za-z]|[\[\]()<>=+,;|\d%])');

-- word_num(s): the one number of an answer written in words ('The total is 19', 'She has 19 apples.',
-- 'x = 19', '\$19 in all'), or '' when s is not one plain number among plain words: a second
-- number, an operator, LaTeX, or a word that changes, bounds, denies or hedges the value (or, not,
-- about, minus, times, thousand, half, twenty, but, under, max, wrong, isn't, isnt, might, guess, inverse,
-- pi, sqrt, square of, doubled, grand, k, impossible, excluding, higher, circa, else, vs, plural scales
-- 'millions', 'close', 'upto', 'debunked', 'doubtful', any adverb in -ly but 'exactly' and 'only' (round 7),
-- ...), or a question ('is it 19'), and it is not read (issue 19: '12 or 13' is a hedge, 'anything but
-- 13' and '13 is wrong' deny it). Right answers this refuses: 'it adds up to 19' ('up to' bounds).
-- unit_num(s): the same for a gold: a number, a space, then words only ('5\text{ cm}', '30 degrees').
-- Units are dropped, never compared: '5 inches' reads 5 against a gold of '5 cm'. A coefficient is no
-- number with a unit: '2x', '4n', '6 pi', '3 i' are symbolic golds (a unit is a word of two letters
-- or more, or one of m g s l h w v k, after a space; issue 19, round 3: '2' was paid for '2x').
CREATE OR REPLACE MACRO value_words(x) AS
    NOT regexp_matches(regexp_replace(x, '\bexactly\b', '', 'g'), '\b(?:(?:hundred|thousand|million|billion|trillion|dozen|ten|lakh|crore|score|grand)s|lakh|crore|kilo|mega|giga|nano|micro|milli|'
        || '(?:eleven|thir|four|fif|six|seven|eigh|nine|twen|thir)te?e?n?ths|elevenths|twentieths|per\s*cents?|percents|pct|ppm|bps|permille|sq|'
        || 'close|near|nearby|shy|excess|upto|atleast|atmost|until|till|sub|non|within|tops|ballpark|'
        || 'debunked|refuted|disproved|disproven|unproven|disputed|disallowed|doubtful|dubious|questionable|uncertain|unverified|unconfirmed|undefined|dne|nah|'
        || 'guessed|negated|inverted|reciprocated|squared|cubed|excl|think|thinks|thought|believe|believes|reckon|guessing|'
        || 'rounded|round|est|some|like|north|south|up|apart|without|forget|scratch|lie|gross|mil|plus|'
        || 'hexadecimal|hex|octal|binary|ternary|duodecimal|base|basis|mille|ppb|ppt|myriads?|\w+ieths|nonsense|mistake|typo|besides|sans|thereabouts|change|to\s+the|'
        || 'error|absurd|inaccurate|improbable|implausible|retracted|fails?|off|miscount|doubt|capped|flawed|unsupported|herring|onwards|nigh|provided|barring|'
        || 'in\s+theory|at\s+(?:the\s+)?(?:earliest|latest|best|worst)|(?:upper|lower)\s+bound|is\s+the\s+limit|in\s+the\s+region\s+of|on\s+the\s+order\s+of|(?:worst|best)\s+case|'
        || '[a-z]{3,}ly)\b|\b(?:or|nor|not|no|never|but|under|below|above|beyond|up\s+to|max|maximum|min|minimum|wrong|false|incorrect|untrue|cannot|inverse|reciprocal|if|unless|whether|might|could|may|likely|unlikely|guess|suppose|assume|estimate|estimated|unsure|unclear|minus|negative|plus|times|over|divided|than|least|most|about|approx|approximately|around|roughly|nearly|almost|maybe|perhaps|possibly|probably|either|neither|between|except|hundred|thousand|million|billion|trillion|dozen|half|halves|quarters?|thirds?|fourths?|fifths?|tenths|hundredths|thousandths|percent|squared|cubed|root|power|factorial|choose|twice|double|triple|pi|sqrt|square\s+of|cube\s+of|opposite|neg|log|ln|exp|doubled|halved|tripled|quadrupled|grand|bn|k|(?:hundred|thousand|million|billion|trillion)ths|sixths|sevenths|eighths|ninths|twelfths|impossible|erroneous|mistaken|bogus|nope|excluding|exclude|excluded|higher|lower|greater|smaller|more|fewer|less|exceeding|exceeds|exceed|upwards?|circa|ish|else|vs|versus|otherwise|instead|ruled|rejected|invalid|(?:is|are|was|were|do|does|did|ca|wo|ai|should|could|would|has|have|had|need|must|might)nt|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b|n[''’]t\b|\d\s*score\b|^\s*(?:is|are|was|can|could|would|does|do)\s+(?:it|this|that|the)\b');
CREATE OR REPLACE MACRO word_num(s) AS
    CASE WHEN value_words(lower(norm_latex(s))) THEN regexp_extract(replace(lower(norm_digits(regexp_replace(regexp_replace(norm_latex(s), '\$([^$]*)\$', '\1', 'g'), '\\[,;:! ]', ' ', 'g'))), '−', '-'),
        '^\s*(?:[a-z]+[''’:,]?\s+)*?(?:(?:m\s*)?(?:[a-z]\w*|\\(?:alpha|beta|gamma|delta|theta|phi|omega|lambda|mu|sigma|angle)(?:\s*[a-z]{1,3})?)\s*(?:_\s*(?:\{\w+\}|\w))?\s*(?:\([^()]*\))?\s*[:=]\s*)?'
        || '([-+]?(?:\\?[$€£])?(?:\d+(?:,\d{3})*(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\}|\d+/\d+)\s*(?:\\?%|\^\s*\{?\\circ\}?|°)?)'
        || '(?:\s*/\s*[a-z]+)?(?:\s*[,:;]?\s+[a-z]+[''’]?[a-z]*(?:\s*/\s*[a-z]+)?(?:\s*\^\s*\{?[23]\}?)?)*\s*\.?\s*$', 1)
    ELSE '' END;
CREATE OR REPLACE MACRO unit_num(s) AS
    CASE WHEN value_words(lower(norm_latex(s))) THEN regexp_extract(replace(lower(norm_digits(regexp_replace(regexp_replace(norm_latex(s), '\$([^$]*)\$', '\1', 'g'), '\\[,;:! ]', ' ', 'g'))), '−', '-'),
        '^\s*([-+]?(?:\\?[$€£])?\d+(?:,\d{3})*(?:\.\d+)?)\s+(?:[a-z]{2,}|[mgslhwvk])\.?(?:\s+[a-z]+\.?)*\s*(?:\^\s*\{?[23]\}?)?\s*$', 1)
    ELSE '' END;

-- num_body(n): n (normalised) without a trailing '%' and, when every comma sits in a well-formed
-- thousands group ('1,234,567.5'), without its commas. '1,2', '12,34' and '0,012' keep theirs (a list,
-- a decimal comma: not decided here; no thousands group starts with 0), so they are not numbers.
CREATE OR REPLACE MACRO num_body(n) AS
    CASE WHEN contains(n, ',') AND regexp_full_match(n, '-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?%?')
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
            WHEN contains(b, 'overline') THEN CAST(num_rat(b).n AS DOUBLE) / CAST(num_rat(b).d AS DOUBLE)
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

-- num_same(a, b): two numbers as a response writes them ('3/4', '0.75', '50%', '1,200', '−3') hold one
-- value (num_double; a % read as x/100): '3/4 or 0.75' writes one answer twice, not two answers
-- (verify.sql's several values; round 13). Equal as DOUBLE: values closer than that are one hedge
-- that pays nothing more, since the last number is still compared with the gold exactly. False when
-- either is no number. (Small on purpose: num_rat inlined twice here had tripled planning time.)
CREATE OR REPLACE MACRO num_double(s) AS
    CASE WHEN contains(s, '/') THEN TRY_CAST(split_part(s, '/', 1) AS DOUBLE) / nullif(TRY_CAST(split_part(s, '/', 2) AS DOUBLE), 0)
         ELSE TRY_CAST(s AS DOUBLE) END;
-- num_val(s): the DOUBLE value of a number as a response writes it ('3/4', '0.75', '50%', '25\%', '$1,200', '−3'), NULL
-- when it is no plain number (LaTeX, words).
CREATE OR REPLACE MACRO num_val(s) AS
    num_double(replace(replace(rtrim(trim(replace(s, '\%', '%'), ' $'), '%'), ',', ''), '−', '-'))
    / CASE WHEN ends_with(trim(replace(s, '\%', '%'), ' $'), '%') THEN 100 ELSE 1 END;
CREATE OR REPLACE MACRO num_same(a, b) AS COALESCE(num_val(a) = num_val(b), false);
-- The no-tag reading's cuts (verify.sql, last_numbers: a stated answer then its check, a denied last number, a
-- computation in brackets after it):
-- answer_cue(): 'answer is', 'Answer:', 'answer =' (stated_answer, stated_other; verify.sql's note test). A constant.
CREATE OR REPLACE MACRO answer_cue() AS '\banswer(?:\s+is|\s*[:=])';
-- stated_answer(): a text's last answer stated in words, with its number right after the cue and the last one of
-- its sentence ('The answer is 21.', 'Answer: 21 apples', '**Final answer:** $21$', 'The answer is $\frac{1}{2}$'; not
-- 'The answer is not 5.', nor 'The answer is $18, because she sells 9 eggs at $2 each.' or 'The answer is 12 (13 if
-- counting the teacher).', which are read as before; a variable's value, 'x = 7', is often a step: not read), whose
-- sentence a check opens after ('Check:', '**Verification:**', 'Let me verify', 'Double-check:', 'Explanation:',
-- 'Proof:', 'To confirm', "Here's the check"). Its groups: the text up to the end of that sentence, whose last number
-- verify.sql reads when the rest is only a check (only_check), the stated number, and what follows it. A constant.
CREATE OR REPLACE MACRO stated_answer() AS
    '(?is)^(.*' || answer_cue() || '[\s*:$]*(?:\\\(\s*)?([-−+]?[$€£]?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?|\\[dt]?frac\s*\{\s*[-−]?\d+\s*\}\s*\{\s*\d+\s*\})%?([^\d\n]*?(?:[.!?]\s|\n)))'
    || '[\s*#>_(✅-]*(?:check(?:ing)?|verification|verify(?:ing)?|let(?:''s|\s+us|\s+me)\s+(?:double[-\s]?)?(?:check|verify|confirm)|double[-\s]?check(?:ing)?|sanity\s+check|to\s+(?:double[-\s]?)?(?:check|verify|confirm)|confirm(?:ation|ing)?|here(?:''s|\s+is)\s+(?:the|a|my)\s+(?:check|verification)|we\s+can\s+(?:check|verify|confirm)|plugging\s+(?:it\s+)?back(?:\s+in)?|step\s+\d+\s*:\s*(?:check|verify)|proof|explanation|justification)\b';
-- only_check(rest, stated): the rest of the text after that sentence is a plain check that confirms the stated
-- number: a computation, no word or sign that hedges, denies, corrects, concludes or states another value ('or',
-- 'maybe', 'also', 'if', 'not', 'wrong', 'wait', 'hold on', 'recount', 'so', 'final', 'answer', '?', '≈', '!=', '=>',
-- '✖', a bold number), and its last line ends in the stated number ('Verification: 7 × 3 = 21 and 21 - 14 = 7'; not
-- '1/12') or the check has one line with numbers, one computation that holds the stated number, then one mark ('Check: 21 ÷ 3 =
-- 7 ✓'; not '3 × 4 = 12 ✓ and 12 + 1 = 13 ✓', '3 × 4 = 12 = 13 ✓', a second line 'Oh, the teacher: 12 + 1 = 13 ✓'). A
-- check that ends anywhere else ('Uh, 12 + 1 = 13.', 'To confirm, 7 × 3 = 21.', a verification that computes another
-- result) leaves the whole text to be read, as before. (A one-line 'Check: 12 + 1 = 13 ✓' is read as 12: one value.)
CREATE OR REPLACE MACRO only_check(rest, stated) AS
    regexp_matches(rest, '\d') AND regexp_matches(rest, '[=+×*/÷]|\\(?:times|cdot|div|frac)|\d\s*[-−]\s*\d')
    AND NOT regexp_matches(rest, '(?i)\b(?:or|maybe|perhaps|possibly|probably|likely|might|could|would|should|must|may|alternatively|if|when|unless|otherwise|else|either|assum\w*|depend\w*|suppos\w*|not|no|never|nor|wrong|incorrect|mistakes?|mistaken|typos?|errors?|sorry|second|solutions?|well|equally|valid|works|holds|alternatives?|whoops|oops|redo|off|cannot|fails?|failed|impossible|ruled|rejected|excluded|herring|invalid|bad|oh|uh|um|recount\w*|revis\w*|miscount\w*|forgot\w*|nope|nah|false|hold\s+on|hang\s+on|hm+|ah|unsure|idk|result|including|excluding|correction|update|edit|answer|final\w*|wait|actually|instead|rather|hmm|but|however|except|also|too|another|other|so|therefore|thus|hence|then|approx\w*|about|around|nearly|almost|roughly|estimate\w*|guess\w*|between|range|vs|versus)\b|\d\s*(?:to|through|thru)\s+[$€£]?\d|\?|n''t|[✗❌✘≠≈~±|⇒→]|!=|=>|->|\*\*\s*[-−]?\d[\d,.]*\s*\*\*|[∴⟹⟶≅≃≟✖✕⚠🤔]|</?think>|\\(?:neq?|approx\w*|sim\w*|cong|pm|mp|lor|vee|x?cancel|sout|implies|therefore|[Ll]ong\w*arrow|[Rr]ightarrow|to)\b')
    AND list_transform([regexp_extract(rest, '([^\n]*\S)\s*$', 1)], lambda line:
            -- the last line ends in the stated number (no fraction's denominator: '1/12', '\frac{1}{12}'; a unit word at most)
            COALESCE(num_val(regexp_extract(line, '(?:^|[^\d/{.,])([-−]?\d[\d,]*(?:\.\d+)?)\}?\$?(?:\s+[A-Za-z]+)?[\s.!)*$✓✔✅☑\x{FE0F}]*$', 1)) = num_val(stated), false)
            -- or the check has one line of numbers, one computation with the stated number in it, then one mark ('Check: 21 ÷ 3 = 7 ✓')
            OR (len(list_filter(string_split(rest, chr(10)), lambda l: regexp_matches(l, '\d'))) = 1 AND regexp_matches(line, '^[^✓✔✅☑]*[✓✔✅☑]\x{FE0F}?[\s.!)*]*$')
                AND length(line) - length(replace(line, '=', '')) = 1
                AND list_contains(list_transform(regexp_extract_all(line, '(?:^|[^\d/{.,])[-−]?\d[\d,]*(?:\.\d+)?'), lambda x: num_val(ltrim(x, ' :(*$'))), num_val(stated))))[1];
-- stated_other(stmt): the last answer cue is someone else's or no assertion ('A common wrong answer is 13', "Tom's
-- answer is 12", 'Suppose the answer is 12', 'My first guess: the answer is 12'): no statement.
CREATE OR REPLACE MACRO stated_other(stmt) AS
    regexp_matches(stmt, '(?is)(?:\b(?:wrong|incorrect|common|tempting|mistaken|initial|first|draft|naive|tentative|possible|other|alternative|expected|suppose|supposing|assume|assuming|if|guess\w*)\b|''s|’s)[^.!?\n\d]*' || answer_cue() || '[^\n]*\s*$');
-- sentence_head(): the text before the first number of the last sentence (denied_last, bracket_computation: the
-- number they read is the first of its sentence). A constant.
CREATE OR REPLACE MACRO sentence_head() AS '(?:.*(?:[.!?]\s|\n)\s*)?[^\d.!?\n]*?';
-- denied_last(): a text that ends in a number denied right after another one ('12, not 13', '12 apples, not 13
-- apples.', 'He has 12 marbles (not 15).', '12 — not 13': at most two words between them, no sentence end: not
-- 'Step 1 gives 12. The final answer is not 13.' or '12 eggs, so the answer is not 13'; the first number of its
-- sentence: not 'Tom has 7 marbles left after giving away 5, not 6.'): head, the text up to the
-- first, whose last number verify.sql reads in its own context, num that number and den the denied one (the same value
-- denied, '12.0, not 12', '1/2, not 0.5', is no answer). A constant.
CREATE OR REPLACE MACRO denied_last() AS
    '(?is)^(' || sentence_head() || '([-−]?[*$€£]*\d[\d,]*(?:\.\d+)?(?:/\d+)?%?)(?:\s*[*$)\]])*(?:\s+[a-z]+){0,2}[*$)\]]*)(?:\s*[,;—–]\s*|\s+(?:and\s+)?|\s*\(\s*)not\s+([*$€£]*[-−]?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?)[*$]*(?:\s+[a-z]+)?\s*\)?\s*[.!]?\s*$';
-- bracket_computation(): a text that ends in a number, then a computation of two numbers in brackets ('The total is
-- 36 (12 × 3).', 'She makes $18 every day (9 eggs × $2 per egg).'; units in words allowed; the first number of its
-- sentence: not 'Janet earns $18 per day by selling 9 eggs (16 − 7).'): head is the text up to the
-- number and at most three words after it, num the number, gap those words, a, op, b the computation. verify.sql reads
-- the head when the computation gives the number (bracket_explains). A constant.
CREATE OR REPLACE MACRO bracket_computation() AS
    '(?s)^(' || sentence_head() || '([-−]?[$€£]?\d[\d,]*(?:\.\d+)?%?)(\s*[*$]*(?:\s+[A-Za-z]+){0,3}))\s+\(\s*([$€£]?\d[\d,]*(?:\.\d+)?)((?:\s+[A-Za-z]+){0,3})\s*'
    || '([×x*·⋅/÷+−-]|\\times|\\cdot|\\div|times|plus|minus|divided\s+by|multiplied\s+by)\s*([$€£]?\d[\d,]*(?:\.\d+)?)((?:\s+[A-Za-z]+){0,3})\s*\)\s*[.!]?\s*$';
-- bracket_explains(m): the computation m (bracket_computation's groups) gives its number, and the word after the
-- number is no operator or clause ('12% of (30 + 20)', '12 (13 × 1)' and '12 (3 × 4 + 1)' are read as before).
CREATE OR REPLACE MACRO bracket_explains(m) AS
    NOT regexp_matches(m.gap || ' ' || m.wa || ' ' || m.wb, '(?i)\b(?:of|times|by|plus|minus|over|to|and|or|nor|is|are|was|were|it|as|than|from|into|not|no|if|but|so|then|maybe|perhaps|possibly|probably|likely|supposedly|presumably|ish|hmm|roughly|approximately|approx|about|around|nearly|almost|wrong|incorrect|false|gives|makes|equals|be|more|less|fewer|least|most|without|with|excluding|including|except|mod|percent|hundred|thousand|million|billion|trillion|dozen|score|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|squared|cubed|nope|nah|circa|ca|odd|upwards?|max\w*|min\w*|excl\w*|incl\w*|sans|\w+ly|[a-z])\b')
    AND COALESCE(abs(CASE WHEN m.op IN ('+', 'plus') THEN num_val(m.a) + num_val(m.b)
                          WHEN m.op IN ('-', '−', 'minus') THEN num_val(m.a) - num_val(m.b)
                          WHEN m.op IN ('/', '÷', '\div') OR starts_with(m.op, 'divided') THEN num_val(m.a) / nullif(num_val(m.b), 0)
                          ELSE num_val(m.a) * num_val(m.b) END - num_val(m.num)) <= 1e-9 * greatest(1.0, abs(num_val(m.num))), false);
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

-- looks_symbolic(n): n (normalised) needs a symbolic checker: LaTeX commands or braces, powers,
-- sub-scripts, brackets (intervals, tuples), relations, operators after a digit, sqrt/pi/infinity,
-- a digit beside a letter ('2x'), a list of numbers ('1,2'), a sum ('x+1', 'abc+1') or a difference with a
-- number or a single letter ('x-y'). Plain words ('paris', 'new-york') are not.
CREATE OR REPLACE MACRO looks_symbolic(n) AS
    regexp_matches(n, '[\\^{}_()\[\]=<>*/|!]|sqrt|pi|inf|[0-9][a-z]|[a-z][0-9]|[0-9.][+-]|[0-9],[0-9]|[a-z0-9)]\+|(?:^|[^a-z])[a-z]-|-[a-z](?:[^a-z]|$)');

-- unsimplified(n): n (normalised) is a closed form with a step still to take (issue 19, rounds 4 and 5:
-- math-verify pays each for its simplified form):
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
        OR regexp_matches(n0, '\\[dtc]?frac\{[^{}]*\}\{1\}|\\[dtc]?frac\{(?:[^{}]|\{[^{}]*\})*\\[dtc]?frac|\}\{\\[dtc]?frac|\\[dtc]?frac\{(?:[^{}]|\{[^{}]*\})*\}\{(?:[^{}]|\{[^{}]*\})*\}(?:\\cdot|\\times|\*)\d+(?:$|[^\d.^])'
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
-- for x^2+1, '(0,1)\cup\emptyset' for (0,1) are not in the gold's form (issue 19, round 5). Both normalised.
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
-- another command ('\sqrt{13} =', '\neg =') is not, so the '=' after it stays (issue 19, round 7).
-- (raw or normalised text: case and spaces either way). What is left is the answer.
CREATE OR REPLACE MACRO strip_name(s) AS regexp_replace(s,
    '^\s*(?:(?:m\s*)?(?:[A-Za-df-z]|[A-Z]{2,4}|\\(?:[aA]lpha|[bB]eta|[gG]amma|[dD]elta|epsilon|zeta|eta|[tT]heta|kappa|[lL]ambda|mu|nu|[xX]i|[pP]hi|rho|[sS]igma|tau|[oO]mega|[pP]si|chi)(?:\s*[A-Za-z])?'
    || '|\\(?:angle|overline|triangle)\s*\{?\s*[A-Z]{1,3}\s*\}?|\\(?:mathbf|vec|boldsymbol)\s*\{?\s*[A-Za-z]\s*\}?)\s*(?:_\s*(?:\{[^{}]*\}|\w))?\s*(?:\^\s*\{[^{}]*\}|'')?\s*(?:\([^()]*\))?'
    || '|\([A-Za-z,\s]+\)|\\[dt]?frac\s*\{\s*d\w*\s*\}\s*\{\s*d\w*\s*\}|\[[A-Z]{2,4}\]|\|[A-Z]{2,4}\||\\text\s*\{\s*[A-Z][a-z]+(?:\s+[a-z]+)?\s*\}'
    || '|\\(?:sin|cos|tan|sec|csc|cot)\s*(?:\^\s*\{?\d\}?)?\s*(?:\\(?:alpha|beta|gamma|theta|phi)|[A-Za-z]))'
    || '\s*(?:=|\\in\b)\s*', '');

-- value_atoms(s): how many values s (norm_latex'ed, case and spaces kept) is written with: numbers,
-- letters, and commands other than layout, operators and relations (\frac, \cdot, \le, \cup, \left,
-- \quad, \text, ...), a
-- name in front left out ('f(x) =', 'A =', 'x \in'). An answer written with more than one atom more
-- than its gold is not in the gold's form: 'x^2+1+x-x', '\frac{\sqrt{2}}{2}\cdot\frac{1}{3}',
-- '(0, \log_2 2)', '$3\sqrt{2}$ $2\sqrt{3}$' (issue 19, round 5: math-verify pays each); '(x-1)(x+1)'
-- for x^2-1 is within one.
CREATE OR REPLACE MACRO value_atoms(s) AS len(regexp_extract_all(
    regexp_replace(regexp_replace(strip_name(s), '(?:^|[^A-Za-z\\])(?:and|or)(?:[^A-Za-z]|$)', ' ', 'g'),
        '\\(?:left|right|[bB]igg?[lrm]?|[dtc]?frac|cdot|times|[lg]eq?|[lg]eqslant|[lg]t|neq?|in|cup|cap|setminus|displaystyle|textstyle|q?quad|hspace|text\w*|math(?:rm|bf|it|sf|tt)|boldsymbol|bm|mbox|operatorname|limits)\b|\\[,;:! ]',
        ' ', 'g'),
    '\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]'));

-- unevaluated(n): n (normalised) holds arithmetic that still needs evaluating: an operator between two
-- literal numbers ('3*4', '7+12', '5-9', '\sqrt{4\cdot3}', 'x^2+2-1'; a number beside a symbol is a
-- coefficient, not an operand: '2+3\sqrt{2}', '3+4i' are values), an integer power of an integer
-- ('2^3'), a factorial, \binom / \choose, sums, products, integrals, limits (issue 19: echoing
-- 'What is 3 * 4?' as '3 * 4' is not an answer). A fraction a/b is a number, not an operation. A
-- literal in braces or parentheses after an operator is read as the literal ('\sqrt{4\cdot{3}}',
-- '\sqrt{(2)^2\cdot 3}', 'x^2+2+(-1)': issue 19, round 3). A power of a bracket of numbers, matrix arithmetic
-- and a sum with a radical in a denominator are not in a value's form either (round 9: '(1+\sqrt{2})^2' for
-- 3+2\sqrt{2}, '2\begin{pmatrix}...', '\frac{1}{3-2\sqrt{2}}').
-- dec_places(n): the most decimal places of a number in n, trailing zeros aside ('(0.5000004, 3)': 7).
CREATE OR REPLACE MACRO dec_places(n) AS
    COALESCE(list_max(list_transform(regexp_extract_all(n, '\d\.(\d*[1-9])', 1), lambda d: length(d))), 0);
CREATE OR REPLACE MACRO unevaluated(n) AS regexp_matches(
    -- a literal in braces or brackets after an operator is the literal ('\cdot{3}', '+(-1)', '{(1)+2}')
    regexp_replace(n, '(^|[-+*/=^(\[{,×·÷]|\\cdot|\\times|\\div)[{(](-?\d+(?:\.\d+)?)[})]', '\1\2', 'g'),
    '(?:^|[-+*/=(\[{,;&<>≤≥×·÷\\]|\\cdot|\\times|\\div|\\q?quad|\\[lg]eq?|\\[lg]t|\\begin\{[a-z]*matrix\})(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})'
    || '(?:[-+*×·÷]|\\cdot|\\times|\\div)(?:-?\d+(?:\.\d+)?|\\[dt]?frac\{\d+\}\{\d+\})(?:$|[-+*/=)\]},;&<>×·÷]|\\(?:\d|end|\}|\]|q?quad)|\\cdot|\\times|\\div|or)'
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
-- \mathbb{N} or \mathbb{R} restrict or change the answer); x as it is otherwise (issue 19, rounds 6
-- and 7: a tail of any plain words had been dropped, 'doubtful', 'millions' and 'degrees' with it).
CREATE OR REPLACE MACRO value_tail(x) AS
    CASE WHEN NOT regexp_matches(x, '\\(?:text|mathrm|mbox|in)') THEN x  -- (the common case, one cheap test)
         WHEN regexp_matches(x, '[\d}\w)]\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{\s*[a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?\s*\}(?:\^\s*\{?[23]\}?)?\s*$')
              AND unit_word(regexp_extract(x, '\{\s*([a-zA-Z]{1,12}\.?(?:\s+[a-zA-Z]{1,12}\.?)?)\s*\}(?:\^\s*\{?[23]\}?)?\s*$', 1))
         THEN regexp_replace(x, '\s*(?:~|\\[,;:! ])?\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}(?:\^\s*\{?[23]\}?)?\s*$', '')
         WHEN regexp_matches(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mathbb\s*\{?Z\}?\s*\)?\s*$|\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$')
              AND contains(regexp_replace(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mathbb\s*\{?Z\}?\s*\)?\s*$|\s*\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$', ''),
                           regexp_extract(x, '([kmn])\s*(?:\\in\s*\\mathbb\s*\{?Z\}?\s*\)?)?\s*$', 1))
         THEN regexp_replace(x, '(?:,|\\q?quad|\\[,;:! ]|~|\s)+\(?\s*(?:\\text\s*\{\s*(?:for|where)\s*\}|for|where)?\s*(?:\\[,;:!]|\s)*[kmn]\s*\\in\s*\\mathbb\s*\{?Z\}?\s*\)?\s*$|\s*\\text\s*\{\s*(?:for|where)\s+(?:(?:any|all|some|every)\s+)?integers?\s*\}\s*[kmn]\s*$', '')
         ELSE x END;

-- uni_math(x): Unicode math as LaTeX, for a symbolic answer ('√2' -> '\sqrt{2}', '2√3' -> '2\sqrt{3}',
-- '√(x+1)' -> '\sqrt{x+1}', '∛2' -> '\sqrt[3]{2}', '⁴√2' -> '\sqrt[4]{2}', 'x²' -> 'x^{2}', 'x⁻¹' -> 'x^{-1}', '½' ->
-- '\frac{1}{2}'), which math-verify does
-- not read (round 13: '<answer>5√2</answer>' had been refused for 5\sqrt{2}).
CREATE OR REPLACE MACRO uni_math(x) AS
    CASE WHEN regexp_matches(x, '[√∛⁰¹²³⁴⁵⁶⁷⁸⁹⁻½⅓⅔¼¾]')
         THEN translate(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                  replace(replace(replace(replace(replace(x, '½', '\frac{1}{2}'), '⅓', '\frac{1}{3}'), '⅔', '\frac{2}{3}'), '¼', '\frac{1}{4}'), '¾', '\frac{3}{4}'),
                  '([⁰¹²³⁴⁵⁶⁷⁸⁹])√\s*(\d+|[A-Za-z])', '\\sqrt[\1]{\2}', 'g'),
                  '√\s*\(([^()]*)\)', '\\sqrt{\1}', 'g'), '√\s*(\d+|[A-Za-z]|\\pi)', '\\sqrt{\1}', 'g'),
                  '∛\s*(\d+|[A-Za-z])', '\\sqrt[3]{\1}', 'g'), '(^|[^\[⁰¹²³⁴⁵⁶⁷⁸⁹⁻])(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)', '\1^{\2}', 'g'), '⁻⁰¹²³⁴⁵⁶⁷⁸⁹', '-0123456789')
         ELSE x END;
-- eq_computed(x): the sides of x before its last '=' compute the last one, so the last side is the answer
-- (verify.sql joined; round 16: '\sqrt{72} = 6\sqrt{2}', 'c = \sqrt{6^2+6^2} = \sqrt{72} = 6\sqrt{2}', '(x-2)(x+2) =
-- x^2-4', '\int_0^1 \frac{dx}{1+x^2} = \frac{\pi}{4}', '\theta = \arctan 1 = \frac{\pi}{4}', '\sin 60^\circ =
-- \frac{\sqrt{3}}{2}' had been several values): the side just before it holds an operation the last side is the
-- value of (an integral, sum, limit, function, binomial, factorial, product of brackets, power of a number, \cdot
-- or \times, a sum under a root or in a fraction, a root of a number with a square factor). 'x = 2\sqrt{3} = 3\sqrt{2}' and '\arctan 1 =
-- \frac{\pi}{4} = \frac{\pi}{3}' compute nothing at their last '=' and stay several values; like '4 \times 4 = 12' for a
-- number, a false computation is not checked.
CREATE OR REPLACE MACRO eq_computed(x) AS list_transform([regexp_extract(x, '([^=]*)=[^=]*$', 1)], lambda side:  -- (bound once)
    regexp_matches(side,
        '\\(?:int|iint|oint|sum|prod|lim|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|log|ln|exp|binom)\b|\)\s*\(|\d\s*\^|\}\s*\^|\)\s*\^|!|\\cdot|\\times|\\sqrt\s*(?:\[[^\]]*\])?\s*\{[^{}]*[-+^*]|\\[dt]?frac\s*\{[^{}]*[-+]')
    OR list_bool_or(list_transform(regexp_extract_all(side, '\\sqrt\s*\{\s*(\d{1,9})\s*\}', 1),
                                   lambda n: list_bool_or(list_transform(range(2, 32), lambda k: CAST(n AS BIGINT) % (k * k) = 0)))))[1];

-- span_words(x): the one math span among plain words, for a symbolic gold's answer ('The length is
-- $2\sqrt{3}-1$.', '$2\sqrt{3} - 1$ cm': words macros.sql value_words lets through, no digit outside the
-- span); x as it is otherwise. verify.sql joined reads a symbolic answer in steps: span_words, then
-- uni_math, then value_tail (a step each: nested, these macros multiply planning time).
CREATE OR REPLACE MACRO span_words(x) AS
    CASE WHEN contains(x, '$') AND regexp_full_match(x, '(?s)[^$]*\$[^$]+\$[^$]*')
              AND regexp_matches(regexp_replace(x, '\$[^$]+\$', ' '), '[A-Za-z]{2}')
              AND NOT regexp_matches(regexp_replace(x, '\$[^$]+\$', ' '), '\d')
              AND value_words(lower(regexp_replace(x, '\$[^$]+\$', ' ')))
         THEN trim(regexp_extract(x, '\$([^$]+)\$', 1)) ELSE x END;

-- set_shape(n): the shape of n (normalised), a name in front ('s =', 'x \in'), \displaystyle and spacing
-- after it left out: 'set' for values in braces ('\{1,2\}', '\left\{0,1\right\}', '{0,1}', '\{0;1\}'),
-- 'tuple' for values in brackets ('(1,2)', '[0,1)'), 'list' for values without any ('0,1'), '' else
-- (one value, or brackets inside: '(1,2),(3,4)', '\{0\}\cup(0,1)'). A set, a tuple or interval and a
-- bare list are three shapes (issue 19, rounds 4 and 5: math-verify pays '\{0, 1\}' and '0, 1' for (0, 1)).
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
-- identical-text shortcut (lower case) and math-verify both paid (issue 19, rounds 4 and 5). Runs on
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

-- number_hedge(op, link, after, lead): the last two numbers of a response without a tag or box state two
-- answers: joined by 'or' ('12 (or 13)', '12 or maybe 13', '12 [or 13]', '12 — or 13'), by \approx / ~ /
-- an arrow ('12 \approx 13', '12 \to 13'), by '=' when the first is no operand ('12 = 13'; '6 + 7 = 13'
-- is a sum and its value), by a separator of alternatives or a range ('12 | 13', '12 vs. 13', '12
-- and/or 13', '12 & 13', '12 nor 13', '12 to 13', '12 through 13', '12–13', '12 \pm 13', '12 +/- 13',
-- '12 \lor 13', '12 \simeq 13'; '12 \text{ or } 13', '12 but maybe 13'), as a list of candidates ('11,
-- 12, 13', '[12, 13]', '11, 12, 13 are possible', 'it is 12 and 13 in some order', '40 41 42 hmm';
-- see the list rule below), in brackets at the end ('12 (13)'); and a last number that is an operand
-- ('so 3 + 4', '84 / 2') is no value. link is the text between the two (lower case, '$' and the
-- markup of lead in verify.sql dropped: '**12** or **13**'), op the operator in front of the first,
-- after the text after the last, lead the characters before the last number (verify.sql's lead). The
-- numbers are compared by verify.sql (equal ones are no hedge). Right answers this refuses: 'I rounded
-- 12.6 to 13' (a range to it) and '12, 10, 120 has been achieved' (a list; SmolLM2 wrote it: lenient
-- reading is a heuristic, a model that tags should be graded strict). Round 11: a whitespace or 'and'
-- list needs a first number that is no operand ('600 is a multiple of 24 and 600 is' is 600, '4 * 3\n12'
-- is 12), and a fraction before '=' is a division ('24/2 = 12').
CREATE OR REPLACE MACRO number_hedge(op, link, after, lead) AS
    regexp_full_match(link, '\s*[,;.—–-]?\s*[(\[]?\s*(?:\\(?:text\w*|mathrm|mbox)\s*\{\s*)?(?:but\s+|and\s+)?(?:or|maybe|perhaps|possibly|probably|could|might)\b.*')
    OR regexp_full_match(link, '\s*(?:↔|⇔|\\iff|\\leftrightarrow|\\q?quad|[a-z][).])\s*')  -- '12 \iff 13', '12 \quad 13', 'A) 12 B) 13'
    OR regexp_full_match(link, '\s*(?:\\approx|≈|~|\\sim)\s*')
    -- '=' and arrows join two answers unless the first is an operand: '4 * 3 => 12' is a computation
    OR (op = '' AND regexp_full_match(link, '\s*(?:=|\\to|→|->|=>|⇒|\\implies|\\(?:long)?rightarrow)\s*'))
    OR regexp_full_match(link, '\s*(?:[-+*/×·÷^x⋅•−:]|\*\*|\\times|\\cdot|\\div|times|mod|out\s+of)\s*\{?\s*')  -- an operand, not a value: '... 3 + 4', '1:2'
    OR regexp_full_match(link, '\s*(?:\||&|and/or|vs\.?|versus|nor|to|through|thru|–|—|±|\\pm|\\mp|\\lor|\\vee|∨|\\simeq|≃|\\cong|≅|\+/-|\+-|-/\+)\s*')  -- alternatives, a range
    OR (regexp_full_match(link, '\s*[(\[]\s*') AND regexp_full_match(after, '\s*[)\]][\s.!?]*'))  -- '12 (13)', '12 [13]'
    -- a list of candidates ending in the last number: joined by 'and' or whitespace alone, whatever
    -- follows ('it is 12 and 13 in some order', '40 41 42 hmm'); by commas at the end of the text
    -- ('11, 12'), or of three or more numbers whatever follows ('11, 12, 13 are possible'), while two
    -- with words after them are a clause and its value ('In 2019, 13 people came')
    OR (op = '' AND regexp_full_match(link, '\s+and\s+|\s+'))
    OR (regexp_full_match(link, '\s*[,;]\s*(?:and\s+)?')
        AND (regexp_full_match(after, '[\s.!?)\]}]*')
             OR regexp_matches(lead, '\d%?\s*[,;]\s*(?:and\s+)?[-−]?\d+(?:\.\d+)?%?\s*[,;]\s*(?:and\s+)?$')));

-- number_denied(lead, after): the last number of a response without a tag or box is not stated as the
-- answer: the text before it denies it ('not 13', "isn't 13", 'cannot be 13', 'neither 12 nor 13',
-- 'anything but 13', 'except 13', 'rather than 13', 'instead of 13', 'other than 13', 'x \neq 13'), the
-- text after it does ('13 is wrong', '13 is not right', "13 isn't", '13 is ruled out', '13 (wrong)'), or the response ends asking about
-- it ('is it 13?'). It is a fallback, not the answer, when the clause it ends makes it one ('12 is the
-- answer unless it is 13', 'probably 12, otherwise 13', '12, and if not then 13'), and the text after it
-- offers another value ('12 or thirteen', '12, or maybe more', '12 (or so)'). lead: the lower-cased
-- characters before it (verify.sql's lead), after: the text after it. 'not 12 but 13' and '12? No: 13.'
-- state 13; 'Unless I am wrong, the answer is 13' states 13 (a comma closes the condition).
CREATE OR REPLACE MACRO number_denied(lead, after) AS
    regexp_matches(lead, '(?:\bnot|n''t|\bcannot|\bnever|\bnor|\bno\s+longer|\bexcept(?:\s+for)?|\bexcluding|\bbesides|\bapart\s+from|\baside\s+from|\bsans|\banything\s+but|\bother\s+than|\brather\s+than|\binstead\s+of|≠|\\neq?|!=|\\notin|\\not\s*\\in|∉)\s*(?:(?:exactly|really|quite|precisely|necessarily|even|always)\s+)?(?:be\s+|equal\s+to\s+|equals?\s+)?[\s$=:]*$')
    OR regexp_matches(lead, '\bnot\s*,[^.!?\d]*,\s*$|\bif\b[^.!?,;:\d]*\bwere\s*$')  -- 'not, as one might think, 12', 'if the answer were 12'
    OR regexp_matches(lead, '\\(?:x|b)?cancel\s*\{$|\\cancelto\s*\{[^{}]*\}\s*\{$|\\sout\s*\{$|\\st\s*\{$')  -- crossed out
    -- (one DFA:) a fallback, an alternative, a value only possible after a doubt ('12. I'm not sure, it could be 13'; 'the number of students could be 12'
    -- and 'The least common multiple, however, could be 12' state 12), a maybe ('maybe 13', 'Check: or maybe 13', '\nor x = 13'; '\nor equivalently 0.5' is one value),
    -- or another value under a condition a note opens ('12. Note: if the teacher counts, it is 13'; 'So, if all
    -- seats are occupied, 45 people can attend' and '$20, but if she uses the coupon, she pays $15' state their number)
    OR regexp_matches(lead, '\b(?:unless|otherwise|if\s+not|or\s+else)\b[\s,]*[^.!?,;:\d]*$|\d[^\d]*\balternatively\b[\s,:]*[^.!?,;:\d]*$'
                          || '|\b(?:not\s+sure|unsure|uncertain|or|alternatively|otherwise)\b[^.!?\n\d]*\b(?:could|might|may)\s+(?:also\s+|well\s+|even\s+)?(?:have\s+been|be|equal)\s*(?:about\s+|around\s+)?[\s$=:]*$|\b(?:maybe|perhaps|possibly)\s+[\s$=:]*$|[:\n][\s*]*or\s+(?:maybe\s+|perhaps\s+|possibly\s+)?(?:[a-z]\s*=\s*)?[\s$]*$|\d[^\d]*\b(?:note|alternatively|otherwise)\b[^\d]*\bif\b[^.!?\n\d]*,[^.!?\n\d]{0,16}$')
    OR (regexp_matches(lead, '\b(?:not\s+(?:sure|certain|convinced)|unsure|doubt|doubtful|wonder)\b[^.!?,;:\d]*$')  -- 'I doubt it is 12', "I'm not sure it's 12"
        AND NOT regexp_matches(lead, '(?:\b(?:no|little|without(?:\s+a)?|beyond(?:\s+a|\s+any)?|not)|n''t)\s+(?:doubt|wonder)|\bno\s+wonder|\bnot\s+sure[^.!?]*\bbut\b'))  -- 'There is no doubt the answer is 12'
    OR regexp_matches(after, '(?i)^\s*[,;—–-]?\s*[(\[]?\s*or\b')
    OR regexp_full_match(after, '\s*\?[\s.!?)]*')
    OR regexp_matches(after, '(?i)^\s*\?\s*(?:i''m\s+|i\s+am\s+)?(?:not\s+sure|unsure|maybe|perhaps|no\s+idea)\b')
    OR regexp_matches(after, '(?i)^[\s.,;:—–-]*(?:which\s+|but\s+(?:that|this|it)\s+)(?:is|was|seems?|looks?|must\s+be)\s+(?:\w+ly\s+)?(?:not\s+(?:right|correct|it)|wrong|incorrect|false|a\s+mistake|an\s+error)\b'
                          || '|^[\s.?!]*(?:no\W*)?(?:wait|no)\b[^.!?]*(?:wrong|not\s+right|incorrect)|that''?s\s+(?:wrong|not\s+right|incorrect)|^[\s—–,-]*(?:no\W*)?scratch\s+that|^[\s(\[]*(?:i\s+am|i''m|i\s+was)\s+not\s+(?:sure|certain|confident)\b|^[\s,]*(?:if|assuming|provided|when)\b[^.!?]*\botherwise\b|^[\s,]*but\s+(?:it|that|this)\s+(?:fails?|failed|doesn''t\s+work|does\s+not\s+work|didn''t\s+work|is\s+not|isn''t|was\s+not|wasn''t)\b|^\s*\?\?|^[\s.]*or\s+is\s+it'
                          || '|^\s*(?:is|seems|looks)\s+(?:unlikely|doubtful|implausible|improbable|absurd|inaccurate|too\s+(?:high|low|big|small|large))'
                          || '|^[\s.,]*(?:hmm\W*)?(?:but\s+)?(?:that|this|it)\s+(?:can''t|cannot|doesn''t|does\s+not|isn''t)\s+(?:seem\s+|be\s+)?(?:right|correct)|^\s*\.*\s*(?:no\s+)?wait\b[^.!?]*\b(?:recompute|recalculate|redo|check)\w*[^.!?\d]*[.!?…]*\s*$')
    OR regexp_matches(after, '(?i)^[\s.,;:—–-]*(?:is|was|would\s+be|seems?|seemed|looks?|appears?|turned\s+out(?:\s+to\s+be)?|must\s+be|can\s+be|could\s+be)\s+(?:\w+ly\s+)?'
                          || '(?:not\b|(?:the\s+|a\s+|an\s+|my\s+|just\s+a\s+|only\s+an?\s+)?(?:(?:first|initial|original|wild|rough|best|educated)\s+)?(?:wrong|incorrect|false|impossible|ruled\s+out|excluded|eliminated|rejected|mistake|mistaken|error|erroneous|typo|nonsense|bogus|invalid|off|red\s+herring|guess|estimate|(?:upper|lower)\s+bound)\b)'
                          || '|^\s*(?:isn''t|wasn''t|can''t|cannot|can\s+not|couldn''t|won''t|doesn''t|does\s+not|didn''t|did\s+not)\b|^\s*fails?\b|^[\s—–:-]*(?:wrong|incorrect)\b|^\s*[(\[]?\s*[✗❌✘]|^\s*(?:\\leftarrow|←|<-+|\\gets)\s*(?:wrong|incorrect|no)\b'
                          || '|^[\s.,;:—–-]*(?:is|was|seems?|looks?)\s+(?:about|nearly|almost|approximately|roughly|more\s+or\s+less|close\s+to|probably|likely|maybe|perhaps)\s+(?:right|correct|it)\b'
                          || '|^\s*[(\[]\s*(?:this|that|it)\s+(?:is|was)\s+(?:\w+\s+)?(?:wrong|incorrect|false|not\s+(?:right|correct))|^[\s.!]*(?:this|that|it|the\s+above|my|the)(?:\s+(?:answer|result|value|one|solution))?\s+(?:is|was)\s+(?:\w+\s+)?(?:wrong|incorrect|false|not\s+(?:right|correct))\b|^\s*(?:\\xmark|✖|✕)'
                          || '|^\s*[(\[]\s*(?:wrong|incorrect|false|no|not(?:\s+(?:right|correct|it|this|sure|confident|certain))?)\s*[)\].!]')
    -- a correction after it in a form no number pattern reads ('12, but the correct answer is thirteen')
    -- ('Hmm, actually the answer is thirteen'; a number after it is compared with the answer: verify.sql's correction)
    OR regexp_matches(after, '(?i)\b(?:actually|wait|no)\b[,\s]*(?:the\s+)?(?:correct\s+|real\s+|right\s+|final\s+)?answer\s+(?:is|should\s+be|=)\s*(?:[^\d\s−-]|$)')
    -- candidates under labels ('Option A: 12\nOption B: 13', 'Guess 1: 12\nGuess 2: 13')
    OR regexp_matches(lead, '(?i)\b(?:option|choice|candidate|guess|alternative|attempt|case|scenario|possibility|answer|method|approach|interpretation|reading|version)\s+\w{1,2}\s*[:)–—-][\s\S]*\b(?:option|choice|candidate|guess|alternative|attempt|case|scenario|possibility|answer|method|approach|interpretation|reading|version)\s+\w{1,2}\s*(?:[:)–—-]|gives)\s*$'
                          || '|(?:^|\n)\s*\((?:\w|[ivx]+)\)[^\n]*\n\s*\((?:\w|[ivx]+)\)\s*$|(?:^|\n)\s*(?:if|when)\b[^:\n]*:[^\n]*\n\s*(?:if|when)\b[^:\n]*:\s*$')
    OR regexp_matches(after, '(?i)\b(?:correct|right|real|actual|true)\s+(?:answer|value|result|total)\s+(?:is|=|:)\s*(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)\b|[IVXLCDM]{2,}\b)');

-- num_close(a, b, tol): a is within tol of the gold b, relative above |b| = 1, absolute below:
-- |a - b| <= tol * max(1, |b|) (config verify.numeric_tolerance; default 0, and verify.sql applies
-- it only to golds that are not integers: exactness is decided by dec_canon / num_rat).
CREATE OR REPLACE MACRO num_close(a, b, tol) AS abs(a - b) <= tol * greatest(1.0, abs(b));

-- norm_ws(s): lower case, typographic quotation marks and apostrophes as the ASCII ones (‘ ’ ‚ ‛ ʼ ‹ ›
-- as ', “ ” „ ‟ « » as ": keeper’s is keeper's and “We” is "We", in a source as in a span), runs of whitespace
-- (a no-break space and the other unicode spaces too) -> one space, trimmed: how retrieval compares
-- cited spans, sources, their sentences and answers (verify_citations.sql). Only the glyph of a mark
-- changes: cite_words splits at every quote mark as before (ʼ, a letter to it, now splits as ' does:
-- keeperʼs is the words keeper and s), and cite_sentences splits the source as written, then norm_ws's
-- each sentence. Not folded: the other look-alikes of an apostrophe (` ´ ′), so keeper`s is still no
-- quote of keeper's.
CREATE OR REPLACE MACRO norm_ws(s) AS trim(regexp_replace(translate(lower(s), '‘’‚‛ʼ‹›“”„‟«»', '''''''''''''''""""""'),
    '[\s\p{Z}]+', ' ', 'g'));

-- cite_words(s): s as its words (runs of letters, digits and '_'; anything else separates), one space
-- between them and one at each end, so that contains(cite_words(a), cite_words(b)) holds only at word
-- boundaries ('29' is not in '1829'): retrieval's citation checks (verify_citations.sql). A number is
-- one word with the . , : / - – — − between its digits: a decimal, a thousands-grouped number, a range,
-- a time, a date, a fraction ('29' is not in '2.29', '29.5', '29,500', '2:29', '12/29/1871' or '1/29',
-- nor '3.5' in '3, 5' or '3-5'); with the groups of three digits after a space when its first group has
-- one to three digits ('29 500' is the word '29500'; s comes norm_ws'd, so a no-break or narrow space is
-- a space; '1871 200' is two words); and with a sign - − – before it that follows no ASCII letter or
-- digit, written '-' ('-29', '(−29)' and '–29' are the word '-29': '29' is not in them, and a gold '-29'
-- is not in '29'; 'B-29' is 'b' and '29'). chr(30) separates the words while the spaces inside a
-- grouped number are dropped. Not defended: a number joined to a word ('29' is a word of '29-year-old'
-- and of 'B-29'); two numbers in a row read as one, the second of three digits ('Route 29 100 miles' is
-- '29100': a right quote of it for the gold 29 is refused; verify_citations.sql keeps a source's line
-- breaks apart, so a line 'Passengers: 29' before a line '500 carts' is still found); a dash between
-- digits is kept as written ('3–5' is not the gold '3-5').
CREATE OR REPLACE MACRO cite_words(s) AS replace(replace(' ' || replace(replace(array_to_string(regexp_extract_all(s,
    '(?:\B[-−–])?(?:\p{N}{1,3}(?: \p{N}{3})+(?:[.,]\p{N}+)?\b|[\p{L}\p{N}_]*\p{N}(?:[.,:/\-–—−]\p{N}+)+|\p{N}[\p{L}\p{N}_]*)'
    || '|[\p{L}\p{N}_]+'), chr(30)), ' ', ''), chr(30), ' ') || ' ', ' −', ' -'), ' –', ' -');

-- cite_sentences(s): source s as its sentences, each norm_ws'd, in order: retrieval's citation unit
-- (verify_citations.sql). A sentence ends at a run of . ! ? … (with any closing quotes or brackets after
-- it: " ' ” ’ », and “ ‘ « › ‹ too, which close a quote in German and other styles: „12.“ The) followed
-- by whitespace and then anything but a lower-case letter ('why?" he asked' and 'shut… for now' go on;
-- 'burned down… The ferry', 'burned…” The' and '»12.« Nobody' end), at a run of 。！？ (no space
-- needed), at a blank line, or at a line break followed by anything but a lower-case letter (a passage
-- of one fact a line; a wrapped line that goes on in lower case is one sentence). A full stop is not
-- an end after a single letter (initials, e.g., i.e.) or after a title or abbreviation of cite_abbrev,
-- unless the next word opens a sentence (cite_opens: 'Route B. It', 'Fenn Bros. The', 'at 5 p.m. The');
-- one not followed by whitespace never is (3.5, www.x.org). A no-break space, and every unicode space,
-- is whitespace.
-- Doubts: an abbreviation or initial before a capitalised word that is no opener ('sold to Fenn Bros.
-- Orla Fenn bought it', 'He said no. Maren left') is read as one sentence; so is a source written in
-- lower case ('it closed. then it'); a wrapped line that goes on with a capitalised word ('rebuilt
-- by\nOrla Fenn') is cut there, and so is an abbreviation that ends nothing before an opener ('e.g.
-- The Times'), and so does an ellipsis that marks a pause before a capitalised word ('waited… Orla
-- came', as '...' did before): the part after it is a whole sentence, and a short quote of it is paid. Marks:
-- chr(31) holds a full stop that ends nothing, chr(30) a sentence end. Tests:
-- tests/test_verify_tasks.py (by hand, and every shipped passage).
CREATE OR REPLACE MACRO cite_abbrev(s) AS regexp_replace(s,
    '(^|[^\p{L}\p{N}_])(\p{L}|mr|mrs|ms|messrs|dr|prof|st|mt|ft|jr|sr|rev|fr|gen|col|capt|cmdr|lt|sgt|gov|sen|rep|'
    || 'hon|no|nos|vol|fig|pp|approx|ca|cf|vs|inc|ltd|co|corp|bros|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|'
    || 'est|art|sec|rs|pop|tab|eq|ch|max|min|lat|long|dept|univ|ed|eds|op|cit)\.',
    '\1\2' || chr(31), 'gi');
-- cite_opens(s): s with a sentence end marked after each full stop followed by whitespace and a
-- capitalised word that opens sentences and is no name (an article, a pronoun, a demonstrative, a
-- preposition or conjunction: 'It', 'The', 'In', 'But'), which cite_abbrev's exceptions do not undo.
CREATE OR REPLACE MACRO cite_opens(s) AS regexp_replace(s,
    '\.(\s+)((?:The|A|An|It|Its|This|That|These|Those|There|Then|Thus|Here|He|She|His|Her|They|Their|We|Our|'
    || 'You|Your|In|On|At|By|For|From|With|After|Before|During|When|While|Since|But|And|So|Yet|Each|Every|All|'
    || 'Both|Some|Many|Most)[\s,])',
    '.' || chr(30) || '\1\2', 'g');
CREATE OR REPLACE MACRO cite_sentences(s) AS list_filter(list_transform(string_split(replace(regexp_replace(
    cite_abbrev(cite_abbrev(cite_opens(regexp_replace(regexp_replace(regexp_replace(s, '\p{Z}', ' ', 'g'),
        '\n\s*\n', chr(30), 'g'), '\n[ \t\r\f\v]*([^\p{Ll}\s])', chr(30) || '\1', 'g')))),  -- twice: 'e.g.' is two matches
    '([.!?…]+["''“”‘’«»‹›)\]]*)\s+([^\p{Ll}])|([。！？]+[”’」』）]*)', '\1\3' || chr(30) || '\2', 'g'), chr(31), '.'), chr(30)),
    lambda x: norm_ws(x)), lambda x: x <> '');

-- cite_needle(s): a cited span as it is looked for in the sources: norm_ws'd, without the quotation
-- marks around it (a quote of a sentence may be wrapped in "..." or “...”).
CREATE OR REPLACE MACRO cite_needle(s) AS trim(norm_ws(s), ' "''“”„‘’«»');

-- cite_trim(s): s without the marks a sentence may start or end with (. ! ? … quotes, brackets,
-- spaces): a quote of a whole sentence may leave them out (verify_citations.sql).
CREATE OR REPLACE MACRO cite_trim(s) AS trim(s, ' .!?…"''“”‘’«»()[]。！？「」『』（）');

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
