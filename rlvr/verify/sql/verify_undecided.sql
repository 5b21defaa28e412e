-- verify(i): the rows pass 1 (verify.sql) left undecided, for rlvr.mathcheck: row_id (verify_rows'
-- rowid), the raw gold answer and the raw extracted prediction (without a name in front: verify.sql
-- undecided_pred), their normalised forms and the extraction, for the reasons.
SELECT rowid AS row_id, undecided_gold AS gold, undecided_pred AS pred, gold_norm, pred_norm, extraction
FROM verify_rows
WHERE verifier = 'undecided'
ORDER BY row_id
