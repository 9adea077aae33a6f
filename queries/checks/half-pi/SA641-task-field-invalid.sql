-- rule: SA641
-- requires: remote_tasks
-- what: a remote task has a status outside the task set, a stale or truncated flag other than 0/1, or updated_at before created_at
-- Spec §4.10, §7.2, §10 invariant 12 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'remote_tasks' AS tbl,
    task.rowid AS row_id,
    'task ' || task.task_id || ': ' || rtrim(
        CASE
            WHEN task.status NOT IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'lost')
            THEN 'status ' || quote(task.status) || ' is not a task status; '
            ELSE ''
        END
        || CASE WHEN task.stale NOT IN (0, 1) THEN 'stale is ' || quote(task.stale) || ', not 0/1; ' ELSE '' END
        || CASE
            WHEN task.truncated NOT IN (0, 1) THEN 'truncated is ' || quote(task.truncated) || ', not 0/1; '
            ELSE ''
        END
        || CASE
            WHEN task.updated_at < task.created_at
            THEN 'updated_at ' || task.updated_at || ' is before created_at ' || task.created_at || '; '
            ELSE ''
        END,
        '; '
    ) AS message,
    task.session_id AS session_id,
    json_object('task_id', task.task_id, 'status', task.status, 'stale', task.stale, 'truncated', task.truncated,
        'created_at', task.created_at, 'updated_at', task.updated_at) AS evidence
FROM remote_tasks AS task
WHERE task.status NOT IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'lost')
    OR task.stale NOT IN (0, 1)
    OR task.truncated NOT IN (0, 1)
    OR task.updated_at < task.created_at
ORDER BY task.rowid
