-- rule: SA621
-- requires: remote_runs
-- what: a remote run whose id is not 16 lowercase hex characters (8 random bytes)
-- Spec §4.8, §5, §10 invariant 22 (P). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'remote_runs' AS tbl,
    r.rowid AS row_id,
    r.session_id AS session_id,
    'remote run ' || quote(substr(r.id, 1, 80)) || ' (hand ' || quote(substr(r.hand_id, 1, 80))
    || ', tool ' || quote(substr(r.tool, 1, 80)) || '): its id is not 16 lowercase hex characters' AS message,
    json_object('run_id', substr(r.id, 1, 80)) AS evidence
FROM remote_runs AS r
WHERE length(r.id) <> 16 OR r.id GLOB '*[^0-9a-f]*'
ORDER BY r.rowid
