-- verify(i): retrieval rows. Every <cite>...</cite> span of a response must occur in one of its
-- problem's source passages, compared after normalising case and whitespace (lower case, runs of
-- whitespace -> one space, trimmed); an empty span is never supported. Fills verify_rows'
-- citations (spans cited), citations_supported and citations_missing (the unsupported spans,
-- quoted and cut at 60 characters, for the reason). A response without a span cites nothing: 0 of 0.
-- Quoting any word of a passage ('the') would be "found", so a row's citations count as supported
-- only when one of its found spans contains the gold answer (cite_answer): otherwise
-- citations_supported is 0 and the reason says the quotes do not support the answer.
-- Parameters: $rollouts, $problems.
UPDATE verify_rows
SET citations = c.n, citations_supported = c.ok, citations_missing = c.missing
FROM (
    WITH p AS (
        SELECT prompt_id, norm_ws(answer) AS gold, sources
        FROM read_parquet($problems, hive_partitioning = false)
        WHERE task = 'retrieval'
    ), v AS (
        SELECT v.rowid AS row_id, v.iteration, v.prompt_id, v.sample_idx, p.gold
        FROM verify_rows AS v JOIN p USING (prompt_id)
    ), spans AS (
        SELECT v.row_id, v.prompt_id, v.gold, unnest(s.spans) AS span, generate_subscripts(s.spans, 1) AS k
        FROM v JOIN (
            SELECT iteration, prompt_id, sample_idx, regexp_extract_all(response_text, '(?s)<cite>(.*?)</cite>', 1) AS spans
            FROM read_parquet($rollouts, hive_partitioning = false)
        ) AS s USING (iteration, prompt_id, sample_idx)
    ), sources AS (
        SELECT prompt_id, norm_ws(unnest(sources)) AS source FROM p
    ), checked AS (
        SELECT s.row_id, s.k, any_value(s.span) AS span, any_value(contains(s.needle, s.gold)) AS has_answer,
            COALESCE(bool_or(s.needle <> '' AND contains(src.source, s.needle)), false) AS found
        FROM (SELECT *, norm_ws(span) AS needle FROM spans) AS s
        LEFT JOIN sources AS src ON src.prompt_id = s.prompt_id
        GROUP BY s.row_id, s.k
    ), per_row AS (
        SELECT row_id, count(*) AS n, count(*) FILTER (WHERE found) AS ok, bool_or(found AND has_answer) AS has_answer,
            string_agg('''' || left(trim(span), 60) || CASE WHEN length(trim(span)) > 60 THEN '...' ELSE '' END || '''', ', '
                       ORDER BY k) FILTER (WHERE NOT found) AS missing
        FROM checked
        GROUP BY row_id
    )
    SELECT v.row_id, CAST(COALESCE(p.n, 0) AS INTEGER) AS n,
        CAST(CASE WHEN p.has_answer THEN p.ok ELSE 0 END AS INTEGER) AS ok,
        CASE WHEN p.ok > 0 AND NOT p.has_answer
             THEN 'no found span contains the answer' || COALESCE('; not found in the sources: ' || p.missing, '')
             ELSE 'not found in the sources: ' || p.missing END AS missing
    FROM v LEFT JOIN per_row AS p USING (row_id)
) AS c
WHERE verify_rows.rowid = c.row_id
