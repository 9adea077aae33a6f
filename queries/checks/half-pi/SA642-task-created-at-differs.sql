-- rule: SA642
-- requires: remote_tasks remote_runs
-- what: a remote task's created_at is not its run's created_at (both are written in one transaction)
-- Spec §4.10, §7.2, §10 invariant 12 (P). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'remote_tasks' AS tbl,
    task.rowid AS row_id,
    'task ' || task.task_id || ' was created at ' || task.created_at || ' but its run at ' || run.created_at
        AS message,
    task.session_id AS session_id,
    json_object('task_id', task.task_id, 'task_created_at', task.created_at, 'run_created_at', run.created_at)
        AS evidence
FROM remote_tasks AS task
JOIN remote_runs AS run ON run.id = task.task_id
WHERE task.created_at IS NOT run.created_at
ORDER BY task.rowid
