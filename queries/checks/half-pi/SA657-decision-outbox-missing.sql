-- rule: SA657
-- requires: security_decisions lifecycle_outbox
-- what: a security decision has no lifecycle_outbox row with its id (both are written in one transaction)
-- Spec §4.14, §4.15, §10 invariant 17 (H): nothing at HEAD prunes the outbox. Rows with trace_id '' are not
-- judged (§11). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'security_decisions' AS tbl,
    decision.rowid AS row_id,
    'security decision ' || decision.id || ' (' || decision.action_kind || ' ' || decision.resource_name
        || ': ' || decision.decision || ') has no outbox row' AS message,
    decision.conversation_id AS session_id,
    json_object('id', decision.id, 'action_kind', decision.action_kind, 'decision', decision.decision)
        AS evidence
FROM security_decisions AS decision
WHERE decision.trace_id <> ''
    AND NOT EXISTS (SELECT 1 FROM lifecycle_outbox AS outbox WHERE outbox.id = decision.id)
ORDER BY decision.rowid
