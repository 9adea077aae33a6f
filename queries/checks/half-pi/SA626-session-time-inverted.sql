-- rule: SA626
-- requires: sessions sessions.updated_at
-- what: a session whose updated_at is before its created_at
-- Spec §2, §4.2, §10 invariant 23 (S). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'sessions' AS tbl,
    s.rowid AS row_id,
    s.id AS session_id,
    'session ' || s.id || ': updated_at ' || quote(s.updated_at) || ' is before created_at '
    || quote(s.created_at) AS message,
    json_object('created_at', s.created_at, 'updated_at', s.updated_at) AS evidence
FROM sessions AS s
WHERE s.updated_at < s.created_at
ORDER BY s.rowid
