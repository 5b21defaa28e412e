-- Retrieval: how cited spans and sources are compared (verify_citations.sql). The rules, and what they do
-- not defend: docs/verifiers.md (the retrieval citation). Tests: tests/unit/verify/sql/test_citations.py (a
-- table per macro), tests/unit/verify/test_verify_tasks.py (through the pass).

-- norm_ws(s): lower case, typographic quotes and apostrophes as the ASCII ones, runs of (unicode) whitespace as one
-- space, trimmed. Only the glyph of a mark changes; other look-alikes of an apostrophe (` ´ ′) are not folded.
CREATE OR REPLACE MACRO norm_ws(s) AS trim(regexp_replace(translate(lower(s), '‘’‚‛ʼ‹›“”„‟«»', '''''''''''''''""""""'),
    '[\s\p{Z}]+', ' ', 'g'));

-- cite_words(s): s as its words, one space between them and at each end, so that contains() holds at word
-- boundaries only ('29' is not in '1829'). A number is one word with the . , : / - – — − between its digits,
-- its groups of three after a space and its sign ('29' is not in '2.29', '29,500', '2:29', '1/29', '29 500', '-29').
-- chr(30) separates the words while the spaces inside a grouped number are dropped.
CREATE OR REPLACE MACRO cite_words(s) AS replace(replace(' ' || replace(replace(array_to_string(regexp_extract_all(s,
    '(?:\B[-−–])?(?:\p{N}{1,3}(?: \p{N}{3})+(?:[.,]\p{N}+)?\b|[\p{L}\p{N}_]*\p{N}(?:[.,:/\-–—−]\p{N}+)+|\p{N}[\p{L}\p{N}_]*)'
    || '|[\p{L}\p{N}_]+'), chr(30)), ' ', ''), chr(30), ' ') || ' ', ' −', ' -'), ' –', ' -');

-- cite_sentences(s): source s as its sentences, each norm_ws'd, in order. A sentence ends at . ! ? … (and
-- closing quotes or brackets) then whitespace and no lower-case letter, at 。！？, at a blank line, or at a line
-- break before no lower-case letter; not after an initial or a cite_abbrev abbreviation unless cite_opens' word
-- follows. Marks: chr(31) a full stop that ends nothing, chr(30) a sentence end.
CREATE OR REPLACE MACRO cite_abbrev(s) AS regexp_replace(s,
    '(^|[^\p{L}\p{N}_])(\p{L}|mr|mrs|ms|messrs|dr|prof|st|mt|ft|jr|sr|rev|fr|gen|col|capt|cmdr|lt|sgt|gov|sen|rep|'
    || 'hon|no|nos|vol|fig|pp|approx|ca|cf|vs|inc|ltd|co|corp|bros|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|'
    || 'est|art|sec|rs|pop|tab|eq|ch|max|min|lat|long|dept|univ|ed|eds|op|cit)\.',
    '\1\2' || chr(31), 'gi');

-- cite_opens(s): a sentence end marked after a full stop, whitespace and a word that opens sentences and is
-- no name ('It', 'The', 'In', 'But'), which cite_abbrev does not undo ('Route B. It').
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

-- cite_needle(s): a cited span as it is looked for: norm_ws'd, without the quotation marks around it.
CREATE OR REPLACE MACRO cite_needle(s) AS trim(norm_ws(s), ' "''“”„‘’«»');

-- cite_trim(s): s without the marks a sentence may start or end with: a quote of a whole sentence may drop them.
CREATE OR REPLACE MACRO cite_trim(s) AS trim(s, ' .!?…"''“”‘’«»()[]。！？「」『』（）');
