-- rule: SA655
-- requires: approval_audits.trace_id remote_runs
-- what: a remote run was created before its approval was resolved
-- Spec §7.1 ("a run is created after its approval is resolved"), §10 invariant 16 (P); approvals with
-- trace_id '' are not judged (§11). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'remote_runs' AS tbl,
    run.rowid AS row_id,
    'run ' || run.id || ' was created at ' || run.created_at || ', before approval '
        || approval.approval_id || ' was ' || approval.status || ' at ' || approval.resolved_at AS message,
    run.session_id AS session_id,
    json_object('run_id', run.id, 'approval_id', approval.approval_id, 'run_created_at', run.created_at,
        'approval_resolved_at', approval.resolved_at) AS evidence
FROM approval_audits AS approval
JOIN remote_runs AS run ON run.id = approval.run_id
WHERE approval.run_id <> ''
    AND approval.trace_id <> ''
    AND approval.resolved_at > 0
    AND run.created_at < approval.resolved_at
ORDER BY run.rowid
