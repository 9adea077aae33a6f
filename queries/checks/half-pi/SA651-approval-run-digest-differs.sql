-- rule: SA651
-- requires: approval_audits.trace_id remote_runs
-- what: a remote approval's args_digest differs from the args_digest of the run it approved
-- Spec §6.3, §7.3, §10 invariant 15 (P); approvals written before the lifecycle columns (trace_id '') are
-- not judged (§11). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ' approved digest ' || approval.args_digest || ' but run '
        || run.id || ' carries ' || run.args_digest AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'run_id', run.id,
        'approval_digest', approval.args_digest, 'run_digest', run.args_digest) AS evidence
FROM approval_audits AS approval
JOIN remote_runs AS run ON run.id = approval.run_id
WHERE approval.run_id <> ''
    AND approval.trace_id <> ''
    AND run.args_digest IS NOT approval.args_digest
ORDER BY approval.rowid
