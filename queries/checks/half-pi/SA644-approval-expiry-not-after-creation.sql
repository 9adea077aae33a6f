-- rule: SA644
-- requires: approval_audits
-- what: an approval expires at or before the moment it was created
-- Spec §4.11, §10 invariant 13 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ': expires_at ' || approval.expires_at
        || ' is not after created_at ' || approval.created_at AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'created_at', approval.created_at,
        'expires_at', approval.expires_at) AS evidence
FROM approval_audits AS approval
WHERE NOT (approval.expires_at > approval.created_at)
ORDER BY approval.rowid
