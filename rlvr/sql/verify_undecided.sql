-- verify(i): the rows pass 1 (verify.sql) left undecided, for rlvr.mathcheck: row_id (verify_rows'
-- rowid), the raw gold answer and the raw extracted prediction, and their normalised forms for reasons.
SELECT rowid AS row_id, undecided_gold AS gold, extracted_answer AS pred, gold_norm, pred_norm
FROM verify_rows
WHERE verifier = 'undecided'
ORDER BY row_id
