-- rule: SA629
-- requires: remote_tasks
-- what: a remote task that finished before it started (both times from the Hand's clock)
-- Spec §4.10, §10 invariant 23 (S). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'remote_tasks' AS tbl,
    t.rowid AS row_id,
    t.session_id AS session_id,
    'task ' || t.task_id || ' (' || t.status || ', hand ' || t.hand_id || '): finished_at ' || t.finished_at
    || ' is before started_at ' || t.started_at AS message,
    json_object('task_id', t.task_id, 'started_at', t.started_at, 'finished_at', t.finished_at) AS evidence
FROM remote_tasks AS t
WHERE t.started_at > 0 AND t.finished_at > 0 AND t.finished_at < t.started_at
ORDER BY t.rowid
