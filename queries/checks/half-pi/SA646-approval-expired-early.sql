-- rule: SA646
-- requires: approval_audits
-- what: an expired approval was marked expired before its expiry time
-- Spec §7.3, §10 invariant 13 (S). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
-- resolved_at 0 is SA643's finding (an expired approval without resolved_at), not this one.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ' was marked expired at ' || approval.resolved_at
        || ', before its expiry at ' || approval.expires_at AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'resolved_at', approval.resolved_at,
        'expires_at', approval.expires_at) AS evidence
FROM approval_audits AS approval
WHERE approval.status = 'expired' AND approval.resolved_at > 0 AND approval.resolved_at < approval.expires_at
ORDER BY approval.rowid
