-- rule: SA660
-- requires: security_decisions lifecycle_outbox
-- what: a security.decision outbox row has no security decision with its id
-- Spec §4.15, §10 invariant 17 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'lifecycle_outbox' AS tbl,
    outbox.rowid AS row_id,
    'outbox row ' || outbox.id || ' (security.decision) has no security_decisions row' AS message,
    outbox.subject_id AS session_id,
    json_object('id', outbox.id, 'trace_id', outbox.trace_id, 'created_at', outbox.created_at) AS evidence
FROM lifecycle_outbox AS outbox
WHERE outbox.event_type = 'security.decision'
    AND NOT EXISTS (SELECT 1 FROM security_decisions AS decision WHERE decision.id = outbox.id)
ORDER BY outbox.rowid
