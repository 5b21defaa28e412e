-- verify(i): retrieval rows. A <cite>...</cite> span is supported when it points at one fact (docs/verifiers.md,
-- the retrieval citation): compared after norm_ws and cite_needle, at word boundaries (cite_words), it is
--   found        in one of its problem's sources;
--   one sentence within one sentence of that source (cite_sentences), so a whole passage or a padded sentence is not;
--   long enough  at least $min_words words (verify.min_citation_words), or that whole sentence;
--   short enough at most $max_words words (verify.max_citation_words);
--   on point     it holds the gold answer as whole words;
--   more         it is not the answer alone;
--   new          no earlier span of the response is a supported quote of the same sentence.
-- Fills citations (spans), citations_supported and citations_missing (each other span, cut at 60 characters,
-- with the rule it broke). No span: 0 of 0. Parameters: $rollouts, $problems, $min_words, $max_words.
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
        -- chr(31) before each line break: numbers at the end of a line and the start of the next are two words
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
