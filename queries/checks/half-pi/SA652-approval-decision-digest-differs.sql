-- rule: SA652
-- requires: approval_audits.trace_id security_decisions
-- what: a security decision linked to an approval (by approval_id, or an inner remote-tool row by run_id) has another input_digest
-- Spec §6.2, §6.3, §7.3, §10 invariant 15 (P); approvals with trace_id '' are not judged (§11).
-- Parameters: none. Output: tbl, row_id, message, session_id, evidence. Located at the decision row.
SELECT
    'security_decisions' AS tbl,
    decision.rowid AS row_id,
    'security decision ' || decision.id || ' (' || decision.decision || ' ' || decision.resource_name
        || ') of approval ' || approval.approval_id
        || CASE WHEN decision.approval_id = approval.approval_id THEN '' ELSE ' (run ' || approval.run_id || ')' END
        || ' has input_digest ' || decision.input_digest || ', not the approved ' || approval.args_digest
        AS message,
    decision.conversation_id AS session_id,
    json_object('id', decision.id, 'approval_id', approval.approval_id, 'run_id', approval.run_id,
        'linked_by', CASE WHEN decision.approval_id = approval.approval_id THEN 'approval_id' ELSE 'run_id' END,
        'approval_digest', approval.args_digest, 'decision_digest', decision.input_digest) AS evidence
FROM approval_audits AS approval
JOIN security_decisions AS decision
    ON decision.approval_id = approval.approval_id
    OR (
        approval.run_id <> ''
        AND decision.run_id = approval.run_id
        AND decision.action_kind = 'tool'
        AND decision.resource_name = approval.tool
    )
WHERE approval.trace_id <> ''
    AND decision.input_digest IS NOT approval.args_digest
ORDER BY decision.rowid, approval.rowid
