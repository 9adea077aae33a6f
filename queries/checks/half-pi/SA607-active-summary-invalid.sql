-- rule: SA607
-- requires: session_runtime session_runtime.active_summary_id context_summaries
-- what: an active_summary_id that names no context summary, or a summary of another session
-- Spec §4.4, §10 invariant 4 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'session_runtime' AS tbl,
    r.rowid AS row_id,
    r.session_id AS session_id,
    'session ' || r.session_id || ': active_summary_id ' || r.active_summary_id
    || CASE
        WHEN c.id IS NULL THEN ' names no context summary'
        ELSE ' names a summary of another session (' || c.session_id || ')'
    END AS message,
    json_object('active_summary_id', r.active_summary_id, 'summary_session_id', c.session_id) AS evidence
FROM session_runtime AS r
LEFT JOIN context_summaries AS c ON c.id = r.active_summary_id
WHERE r.active_summary_id <> '' AND (c.id IS NULL OR c.session_id IS NOT r.session_id)
ORDER BY r.rowid
