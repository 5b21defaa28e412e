-- verify(i): a Python tier's verdicts into verify_rows: verify_fills, an Arrow table registered on the connection,
-- one row per row pass 1 left to the tier (undecided: math-verify, code: the sandbox, logic: rlvr.verify.logic).
UPDATE verify_rows
SET correct = f.correct, score = f.score, verifier = f.verifier, reason = f.reason, verifier_error = f.verifier_error
FROM verify_fills AS f
WHERE verify_rows.rowid = f.row_id
