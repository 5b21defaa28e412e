-- verify(i): write rlvr.mathcheck's verdicts into verify_rows. verify_fills is an Arrow table
-- registered on the connection (row_id, correct, verifier_error, reason, verifier), one row per
-- row that pass 1 left undecided (math_verify) or to the sandbox (code).
-- Parameters: $correct_reward, $format_reward (as in verify.sql).
UPDATE verify_rows
SET correct = f.correct,
    reward = CAST(CASE WHEN f.correct THEN $correct_reward ELSE 0 END AS DOUBLE)
             + CAST(CASE WHEN verify_rows.format_ok THEN $format_reward ELSE 0 END AS DOUBLE),
    verifier = f.verifier, reason = f.reason, verifier_error = f.verifier_error
FROM verify_fills AS f
WHERE verify_rows.rowid = f.row_id
