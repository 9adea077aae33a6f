-- rule: SA653
-- requires: approval_audits.trace_id security_decisions
-- what: an approval resolved with allow has no tool security decision carrying its approval_id
-- Spec §7.3, §10 invariant 16 (P); approvals with trace_id '' are not judged (§11).
-- Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ' was resolved ' || approval.decision || ' for ' || approval.tool
        || ' but no tool security decision carries its approval_id' AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'decision', approval.decision, 'tool', approval.tool,
        'request_id', approval.request_id) AS evidence
FROM approval_audits AS approval
WHERE approval.status = 'resolved'
    AND approval.decision IN ('allow_once', 'allow_session')
    AND approval.trace_id <> ''
    AND NOT EXISTS (
        SELECT 1 FROM security_decisions AS decision
        WHERE decision.approval_id = approval.approval_id AND decision.action_kind = 'tool'
    )
ORDER BY approval.rowid
