-- rule: SA645
-- requires: approval_audits
-- what: a resolved approval was decided at or after its expiry (the broker expires it first)
-- Spec §7.3, §10 invariant 13 (P). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ' was resolved (' || approval.decision || ') at '
        || approval.resolved_at || ', not before it expired at ' || approval.expires_at AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'decision', approval.decision,
        'resolved_at', approval.resolved_at, 'expires_at', approval.expires_at) AS evidence
FROM approval_audits AS approval
WHERE approval.status = 'resolved' AND approval.resolved_at >= approval.expires_at
ORDER BY approval.rowid
