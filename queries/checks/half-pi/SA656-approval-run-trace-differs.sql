-- rule: SA656
-- requires: approval_audits.trace_id approval_audits.parent_span_id remote_runs.trace_id remote_runs.span_id
-- what: a remote approval and its run are not in one trace (approval.trace_id = run.trace_id, approval.parent_span_id = run.span_id)
-- Spec §4.8, §4.11, §10 invariant 16 (S); rows with trace_id '' on either side are not judged (§11).
-- Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'remote_runs' AS tbl,
    run.rowid AS row_id,
    'run ' || run.id || ' and its approval ' || approval.approval_id || ' differ in '
        || rtrim(
            CASE WHEN run.trace_id IS NOT approval.trace_id THEN 'trace_id, ' ELSE '' END
            || CASE WHEN run.span_id IS NOT approval.parent_span_id
                THEN 'span_id (the approval''s parent span), ' ELSE '' END,
            ', '
        ) AS message,
    run.session_id AS session_id,
    json_object('run_id', run.id, 'approval_id', approval.approval_id,
        'run_trace_id', run.trace_id, 'approval_trace_id', approval.trace_id,
        'run_span_id', run.span_id, 'approval_parent_span_id', approval.parent_span_id) AS evidence
FROM approval_audits AS approval
JOIN remote_runs AS run ON run.id = approval.run_id
WHERE approval.run_id <> ''
    AND approval.trace_id <> ''
    AND run.trace_id <> ''
    AND (run.trace_id IS NOT approval.trace_id OR run.span_id IS NOT approval.parent_span_id)
ORDER BY run.rowid
