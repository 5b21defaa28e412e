-- A reward plug-in in SQL (README "Your own rewards"): length-aware exact match.
-- A correct answer earns 1 when the whole response is at most 8 tokens, then 8 / length (say it
-- briefly); a wrong one earns 0. `responses` has one row per response: response_text,
-- num_response_tokens, finish_reason, extracted_answer, extraction, format_ok, correct (the built-in
-- verdict), and the problem's columns (task, split, prompt, answer, tests, sources, meta).
SELECT prompt_id, sample_idx,
       CASE WHEN NOT correct THEN 0.0
            WHEN num_response_tokens <= 8 THEN 1.0
            ELSE 8.0 / num_response_tokens END AS score,
       CASE WHEN NOT correct THEN 'wrong: ' || coalesce(extracted_answer, 'no answer') || ' vs ' || answer
            ELSE 'exact match in ' || num_response_tokens || ' tokens' END AS reason
FROM responses
