-- rule: SA654
-- requires: approval_audits.trace_id remote_runs
-- what: a remote approval that was resolved or expired has no remote run with its run_id
-- Spec §7.1, §7.3, §10 invariant 16 (P); approvals with trace_id '' are not judged (§11).
-- Parameters: none. Output: tbl, row_id, message, session_id, evidence. A cancelled approval (also one
-- cancelled by startup recovery) legitimately has no run.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'remote approval ' || approval.approval_id || ' (' || approval.status
        || CASE WHEN approval.decision <> '' THEN ' ' || approval.decision ELSE '' END
        || ') names run ' || approval.run_id || ', which does not exist' AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'run_id', approval.run_id, 'status', approval.status,
        'decision', approval.decision) AS evidence
FROM approval_audits AS approval
WHERE approval.run_id <> ''
    AND approval.status IN ('resolved', 'expired')
    AND approval.trace_id <> ''
    AND NOT EXISTS (SELECT 1 FROM remote_runs AS run WHERE run.id = approval.run_id)
ORDER BY approval.rowid
