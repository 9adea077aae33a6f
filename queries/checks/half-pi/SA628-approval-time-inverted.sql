-- rule: SA628
-- requires: approval_audits
-- what: an approval resolved (resolved_at set) before it was created
-- Spec §4.11, §10 invariant 23 (S). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'approval_audits' AS tbl,
    a.rowid AS row_id,
    a.conversation_id AS session_id,
    'approval ' || a.approval_id || ' (' || a.status || ', session ' || a.conversation_id || '): resolved_at '
    || a.resolved_at || ' is before created_at ' || a.created_at AS message,
    json_object(
        'approval_id', a.approval_id, 'status', a.status, 'created_at', a.created_at, 'resolved_at', a.resolved_at
    ) AS evidence
FROM approval_audits AS a
WHERE a.resolved_at > 0 AND a.resolved_at < a.created_at
ORDER BY a.rowid
