-- Retrieval: how cited spans and sources are compared (verify_citations.sql).
-- Tests: tests/unit/verify/test_verify_tasks.py.

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
-- tests/unit/verify/test_verify_tasks.py (by hand, and every shipped passage).
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
