-- verify(i): write a Python tier's verdicts into verify_rows. verify_fills is an Arrow table
-- registered on the connection (row_id, correct, score, verifier_error, reason, verifier), one row
-- per row that pass 1 left to it: undecided (math_verify), code (sandbox) or logic (rlvr.logic).
UPDATE verify_rows
SET correct = f.correct, score = f.score, verifier = f.verifier, reason = f.reason, verifier_error = f.verifier_error
FROM verify_fills AS f
WHERE verify_rows.rowid = f.row_id
