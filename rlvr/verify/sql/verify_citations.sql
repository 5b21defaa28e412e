-- verify(i): retrieval rows. A <cite>...</cite> span is SUPPORTED when all of these hold, compared
-- after normalising case and whitespace (norm_ws) and, for word boundaries, splitting into words
-- (cite_words: letters, digits, '_'; everything else separates):
--   found       it occurs in one of its problem's sources, at word boundaries ('rnard took on' is
--               not a quote of 'Arnard took on');
--   long enough at least $min_words words (verify.min_citation_words), or a whole sentence of that
--               source (sentences end at . ! ? followed by whitespace; the end mark may be left out);
--   on point    it contains the gold answer as whole words ('29' is not in '1829');
--   more        it is not the answer alone (quoting 'Caervale' supports nothing).
-- Fills verify_rows' citations (spans cited), citations_supported (spans supported) and
-- citations_missing (each other span, quoted and cut at 60 characters, with the rule it broke, for
-- the reason). A response without a span cites nothing: 0 of 0; an empty span is never supported.
-- Parameters: $rollouts, $problems, $min_words.
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
        SELECT prompt_id, source, cite_words(source) AS source_words,
            list_transform(regexp_split_to_array(source, '[.!?]\s+'), lambda x: rtrim(trim(x), '.!?')) AS sentences
        FROM (SELECT prompt_id, norm_ws(unnest(sources)) AS source FROM p)
    ), needles AS (
        SELECT *, cite_words(needle) AS needle_words, length(cite_words(needle)) - length(replace(cite_words(needle), ' ', '')) - 1 AS n_words
        FROM (SELECT *, norm_ws(span) AS needle FROM spans)
    ), checked AS (
        SELECT s.row_id, s.k, any_value(s.span) AS span,
            COALESCE(bool_or(s.needle_words <> '  ' AND contains(src.source, s.needle) AND contains(src.source_words, s.needle_words)), false) AS found,
            COALESCE(bool_or(s.n_words >= $min_words OR list_contains(src.sentences, rtrim(s.needle, '.!? '))), false) AS long_enough,
            any_value(s.gold_words <> '  ' AND contains(s.needle_words, s.gold_words)) AS has_answer,
            any_value(s.needle_words = s.gold_words) AS answer_alone
        FROM needles AS s
        LEFT JOIN sources AS src ON src.prompt_id = s.prompt_id
        GROUP BY s.row_id, s.k
    ), judged AS (
        SELECT *, CASE WHEN NOT found THEN 'not in the sources'
                       WHEN answer_alone THEN 'the answer alone'
                       WHEN NOT has_answer THEN 'does not contain the answer'
                       WHEN NOT long_enough THEN 'shorter than ' || $min_words || ' words and not a whole sentence'
                  END AS broken
        FROM checked
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
