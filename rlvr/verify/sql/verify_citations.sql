-- verify(i): retrieval rows. A <cite>...</cite> span is SUPPORTED when it points at one fact: all of
-- these hold, compared after normalising case, whitespace and the glyphs of quotation marks (norm_ws;
-- a no-break space is a space, ‘ ’ ʼ are ' and “ ” „ are ": keeper’s quotes the source's keeper's, and
-- the other way round; a quote that differs in anything but those glyphs is still not found) and
-- leaving out the quotation marks around the span (cite_needle), and, for word boundaries,
-- splitting into words (cite_words: letters, digits, '_'; everything else separates, but a number is one
-- word with the . , : / - between its digits, its space-grouped thousands and its sign: 2.29, 29,500,
-- 3-5, 2:29, 12/29/1871, 1/29, 29 500 and -29 (also −29, –29) are one word each):
--   found        it occurs in one of its problem's sources, at word boundaries ('rnard took on' is
--                not a quote of 'Arnard took on');
--   one sentence it lies within one sentence of that source (cite_sentences, macros.sql: a sentence
--                ends at . ! ? … and any closing quote, then whitespace and no lower-case letter, at a
--                blank line, or at a line break before no lower-case letter; not after initials,
--                'Dr.', 'St.', 'Bros.' ..., unless a word that opens sentences follows ('Route B. It'),
--                nor inside 3.5), so the whole passage, every passage, two lines of a one-fact-a-line
--                passage, or the right sentence padded with words of its neighbours supports nothing.
--                Not defended: an abbreviation or initial that ends a sentence before a capitalised
--                word that is no opener ('Fenn Bros. Orla Fenn bought it') joins the two sentences;
--                an ellipsis (… or ...) that marks a pause before a capitalised word ('waited… Orla
--                came') cuts one, and a short quote of its second part is paid as a whole sentence;
--   long enough  at least $min_words words (verify.min_citation_words), or that whole sentence (its
--                end mark and quotes may be left out);
--   short enough at most $max_words words (verify.max_citation_words): a passage without sentence
--                marks is one sentence, and quoting it whole is still not a citation;
--   on point     it contains the gold answer as whole words ('29' is not in '1829', '2.29', '29,500',
--                '2:29', '12/29/1871', '1/29', '29 500' or '-29'; '-29' not in '29'; '3.5' not in '3, 5' or
--                '3-5'). Not defended: the answer in another role, as a word of its own ('the
--                29-year-old', 'B-29', 'Orla Fenn was born in Brede' for the builder Orla Fenn): the check
--                does not know which fact answers the question (meta.support does); and two numbers in a
--                row, the second of three digits, are read as one ('Route 29 100 miles' holds no 29);
--   more         it is not the answer alone (quoting 'Caervale' supports nothing);
--   new          no earlier span of the response is a supported quote of the same sentence (citing the
--                right sentence three times beside a junk span is 1 of 4, not 3 of 4).
-- Fills verify_rows' citations (spans cited), citations_supported (spans supported) and
-- citations_missing (each other span, quoted and cut at 60 characters, with the rule it broke, for
-- the reason). A response without a span cites nothing: 0 of 0; an empty span is never supported.
-- Parameters: $rollouts, $problems, $min_words, $max_words.
UPDATE verify_rows
SET citations = c.n, citations_supported = c.ok, citations_missing = c.missing
FROM (
    WITH p AS (
        SELECT prompt_id, norm_ws(answer) AS gold, cite_words(norm_ws(answer)) AS gold_words, sources
        FROM read_parquet($problems, hive_partitioning = false)
        WHERE task = 'retrieval'
    ), v AS (
        SELECT v.rowid AS row_id, v.iteration, v.prompt_id, v.sample_idx, p.gold, p.gold_words
        FROM verify_rows AS v JOIN p USING (prompt_id)
    ), spans AS (
        SELECT v.row_id, v.prompt_id, v.gold_words, unnest(s.spans) AS span, generate_subscripts(s.spans, 1) AS k
        FROM v JOIN (
            SELECT iteration, prompt_id, sample_idx, regexp_extract_all(response_text, '(?s)<cite>(.*?)</cite>', 1) AS spans
            FROM read_parquet($rollouts, hive_partitioning = false)
        ) AS s USING (iteration, prompt_id, sample_idx)
    ), sources AS (
        -- chr(31) before each line break: a number at the end of one line and one at the start of the next
        -- are two words ('29' then '500 carts' is not '29500')
        SELECT prompt_id, norm_ws(source) AS source, cite_words(norm_ws(replace(source, chr(10), chr(31) || chr(10)))) AS source_words,
            cite_sentences(source) AS sentences
        FROM (SELECT prompt_id, unnest(sources) AS source FROM p)
    ), needles AS (
        SELECT *, cite_words(needle) AS needle_words, length(cite_words(needle)) - length(replace(cite_words(needle), ' ', '')) - 1 AS n_words
        FROM (SELECT *, cite_needle(span) AS needle FROM spans)
    ), checked AS (
        SELECT s.row_id, s.k, any_value(s.span) AS span,
            COALESCE(bool_or(s.needle_words <> '  ' AND contains(src.source, s.needle) AND contains(src.source_words, s.needle_words)), false) AS found,
            -- the first sentence that holds the span whole: what the span cites
            min(list_filter(src.sentences, lambda x: contains(x, s.needle) AND contains(cite_words(x), s.needle_words))[1]) AS sentence,
            COALESCE(bool_or(s.n_words >= $min_words
                OR list_contains(list_transform(src.sentences, lambda x: cite_trim(x)), cite_trim(s.needle))), false) AS long_enough,
            any_value(s.n_words > $max_words) AS too_long,
            any_value(s.gold_words <> '  ' AND contains(s.needle_words, s.gold_words)) AS has_answer,
            any_value(s.needle_words = s.gold_words) AS answer_alone
        FROM needles AS s
        LEFT JOIN sources AS src ON src.prompt_id = s.prompt_id
        GROUP BY s.row_id, s.k
    ), ruled AS (
        SELECT *, CASE WHEN NOT found THEN 'not in the sources'
                       WHEN answer_alone THEN 'the answer alone'
                       WHEN NOT has_answer THEN 'does not contain the answer'
                       WHEN sentence IS NULL THEN 'runs across a sentence boundary'
                       WHEN NOT long_enough THEN 'shorter than ' || $min_words || ' words and not a whole sentence'
                       WHEN too_long THEN 'longer than ' || $max_words || ' words'
                  END AS broken
        FROM checked
    ), judged AS (
        SELECT row_id, k, span,
            CASE WHEN broken IS NULL AND row_number() OVER (PARTITION BY row_id, broken IS NULL, sentence ORDER BY k) > 1
                 THEN 'repeats an earlier citation of the same sentence' ELSE broken END AS broken
        FROM ruled
    ), per_row AS (
        SELECT row_id, count(*) AS n, count(*) FILTER (WHERE broken IS NULL) AS ok,
            string_agg('''' || left(trim(span), 60) || CASE WHEN length(trim(span)) > 60 THEN '...' ELSE '' END || ''' ('
                       || broken || ')', ', ' ORDER BY k) FILTER (WHERE broken IS NOT NULL) AS missing
        FROM judged
        GROUP BY row_id
    )
    SELECT v.row_id, CAST(COALESCE(p.n, 0) AS INTEGER) AS n, CAST(COALESCE(p.ok, 0) AS INTEGER) AS ok, p.missing
    FROM v LEFT JOIN per_row AS p USING (row_id)
) AS c
WHERE verify_rows.rowid = c.row_id
