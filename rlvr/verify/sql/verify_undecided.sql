-- verify(i): the rows pass 1 left undecided, for rlvr.verify.math: the raw gold and answer (without a name in
-- front: undecided_pred), their normalised forms and the extraction, for the reasons.
SELECT rowid AS row_id, undecided_gold AS gold, undecided_pred AS pred, gold_norm, pred_norm, extraction
FROM verify_rows
WHERE verifier = 'undecided'
ORDER BY row_id
