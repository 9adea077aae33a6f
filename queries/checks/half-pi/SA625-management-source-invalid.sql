-- rule: SA625
-- requires: management_audits
-- what: a management audit whose source is not repl, ipc or offline_cli
-- Spec §4.13, §10 invariant 22 (P). Parameters: none. Output: tbl, row_id, message, evidence.
SELECT
    'management_audits' AS tbl,
    a.rowid AS row_id,
    'management audit ' || a.id || ' (' || quote(substr(a.operation, 1, 80)) || ' of '
    || quote(substr(a.target_label, 1, 80)) || ', request ' || quote(substr(a.request_id, 1, 80))
    || '): source ' || quote(substr(a.source, 1, 80)) || ' is not repl, ipc or offline_cli' AS message,
    json_object('audit_id', a.id, 'source', substr(a.source, 1, 80)) AS evidence
FROM management_audits AS a
WHERE a.source NOT IN ('repl', 'ipc', 'offline_cli')
ORDER BY a.rowid
