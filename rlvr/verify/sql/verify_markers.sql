-- verify(i), step 1: what each response marks as its answer (the answer contract, docs/verifiers.md), into the
-- temp table verify_markers; run by rlvr.verify.scoring before verify.sql; macros: markers.sql.
-- Parameters: $rollouts (Parquet files), $multiple ('reject': markers that hold different answers are a hedge;
-- 'last': the last marker counts), $format_mode ('answer' | 'think_answer').
-- Reasoning is never the answer: <think> spans, all before a lone '</think>' (the prompt opened the block) and
-- all after an unclosed '<think>' are dropped; <cite> spans are quotes. Refused, no guess: an unclosed <answer>,
-- an unreadable \boxed{, a marker inside an expression, text after the last marker. lenient_line: the last
-- line of a response with no marker, which verify.sql reads for lenient tasks only.
CREATE OR REPLACE TEMP TABLE verify_markers AS
WITH texts AS (
    SELECT iteration, prompt_id, sample_idx, num_response_tokens AS n_tok,
        CASE WHEN $format_mode = 'think_answer' THEN think_answer_ok(response_text) ELSE false END AS think_ok,
        CASE WHEN contains(t1, '<cite>') THEN regexp_replace(t1, '(?s)<cite>.*?</cite>', ' ', 'g') ELSE t1 END AS t
    FROM (
        SELECT *, CASE WHEN contains(t0, '</think>') THEN string_split(t0, '</think>')[-1]
                       WHEN contains(t0, '<think>') THEN split_part(t0, '<think>', 1) ELSE t0 END AS t1
        FROM (
            SELECT *, CASE WHEN contains(response_text, '<think>')
                           THEN regexp_replace(response_text, '(?s)<think>.*?</think>', ' ', 'g') ELSE response_text END AS t0
            FROM read_parquet($rollouts, hive_partitioning = false)
        )
    )
), found AS (
    -- (each check below that a text without its marker cannot fail runs only on the texts that hold one)
    SELECT *, list_transform(ms, lambda m: {'kind': marker_kind(m), 'body': marker_body(m)})
              || CASE WHEN fl <> '' AND NOT regexp_matches(fl, '<answer>|\\boxed|####') THEN [{'kind': 'final_line', 'body': fl}]
                      ELSE [] END AS marks,
        -- every '\boxed' of the text inside a marker read whole, every '<answer>' closed
        CASE WHEN contains(t, '\boxed') THEN (strlen(t) - strlen(replace(t, '\boxed', ''))) // 6 <> COALESCE(list_sum(list_transform(ms,
            lambda m: (strlen(m) - strlen(replace(m, '\boxed', ''))) // 6)), 0) ELSE false END AS box_bad,
        CASE WHEN contains(t, 'answer>')
             THEN (strlen(t) - strlen(replace(t, '<answer>', ''))) // 8 <> (strlen(t) - strlen(replace(t, '</answer>', ''))) // 9
             ELSE false END AS tag_open,
        -- the last marker ends the response (a final-answer line does, being the last line)
        CASE WHEN len(ms) = 0 OR NOT (fl = '' OR regexp_matches(fl, '<answer>|\\boxed|####')) THEN false
             WHEN regexp_full_match(string_split(t, ms[-1])[-1], '(?s)(?:\s|[.*$]|\\[)\]])*') THEN false  -- (closing marks only)
             ELSE NOT ends_answer(string_split(t, ms[-1])[-1]) END AS said_after,
        CASE WHEN len(ms) > 0 THEN marker_glued(t) ELSE false END AS glued
    FROM (
        SELECT *, CASE WHEN NOT (contains(t, '<answer>') OR contains(t, '\boxed') OR contains(t, '####')) THEN []
                       -- one '<answer>', no other marker: the tag up to the first '</answer>' after it, as the pattern reads it
                       WHEN NOT contains(t, '\boxed') AND NOT contains(t, '####') AND len(string_split(t, '<answer>')) = 2
                           THEN CASE WHEN contains(split_part(t, '<answer>', 2), '</answer>')
                                     THEN ['<answer>' || split_part(split_part(t, '<answer>', 2), '</answer>', 1) || '</answer>'] ELSE [] END
                       -- boxes only: the box alternative of the pattern alone (a quarter of its cost)
                       WHEN NOT contains(t, '<answer>') AND NOT contains(t, '####') THEN regexp_extract_all(t, box_pattern())
                       ELSE regexp_extract_all(t, marker_pattern()) END AS ms,
            final_answer(t) AS fl
        FROM texts
    )
), agreed AS (
    -- said: the markers' answers (mark_value), distinct, when there are two markers or more (only a length
    -- above 1 and its text are read below); first_filled: the first marker whose norm_answer is not empty
    SELECT *,
        CASE WHEN len(marks) > 1
             THEN list_sort(list_distinct(list_filter(list_transform(marks, lambda m: mark_value(m.body)), lambda a: a <> '')))
             ELSE [] END AS said,
        CASE WHEN len(marks) > 1 THEN len(list_filter(marks, lambda m: m.kind = 'answer_tag'))
             WHEN marks[1].kind = 'answer_tag' THEN 1 ELSE 0 END AS n_tags,
        CASE WHEN len(marks) > 1 THEN list_filter(marks, lambda m: mark_norm(m.body) <> '')[1]
             WHEN mark_norm(marks[1].body) <> '' THEN marks[1] END AS first_filled,
        -- (a final-answer line is a mark only when it holds no box)
        CASE WHEN contains(t, '\boxed') THEN list_bool_or(list_transform(marks, lambda m: box_beside(m.body))) ELSE false END AS box_mixed
    FROM found
)
SELECT iteration, prompt_id, sample_idx, n_tok,
    CASE WHEN $format_mode = 'think_answer' THEN think_ok
         ELSE n_tags > 0 AND NOT tag_open AND (len(said) <= 1 OR $multiple = 'last') END AS format_ok,
    CASE WHEN len(marks) = 0 THEN 'none'
         WHEN len(said) > 1 AND $multiple = 'last' THEN marks[-1].kind
         ELSE COALESCE(first_filled.kind, marks[1].kind) END AS extraction,
    CASE WHEN len(marks) = 0 THEN NULL
         WHEN len(said) > 1 AND $multiple = 'last' THEN marks[-1].body
         ELSE COALESCE(first_filled.body, '') END AS extracted,
    CASE WHEN tag_open THEN 'an <answer> tag that is never closed'
         WHEN box_bad THEN 'a \boxed{ that cannot be read (unclosed, or braces nested deeper than five levels)'
         WHEN glued THEN 'a marker inside an expression (a sign, digit, operator or relation touches it)'
         WHEN box_mixed THEN 'a marker that holds a \boxed{} beside more content (a box is a marker''s whole content)'
         WHEN said_after THEN 'text after the last marker (the answer must end the response)'
         WHEN len(said) > 1 AND $multiple = 'reject'
             THEN 'markers that hold different answers (' || array_to_string(said, '; ') || '): a hedge (verify.multiple_answers = reject)'
    END AS refused,
    -- (the line only: verify.sql reads its number for lenient tasks alone, most runs have none)
    CASE WHEN len(marks) = 0 AND NOT tag_open AND NOT box_bad THEN last_line(t) END AS lenient_line
FROM agreed
