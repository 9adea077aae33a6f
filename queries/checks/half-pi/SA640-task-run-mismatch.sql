-- rule: SA640
-- requires: remote_tasks remote_runs
-- what: a remote task has no remote run with its id, or differs from it in session, hand, tool or args_digest
-- Spec §4.10, §7.2, §10 invariant 12 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'remote_tasks' AS tbl,
    task.rowid AS row_id,
    'task ' || task.task_id || CASE
        WHEN run.rowid IS NULL THEN ' has no remote_runs row with the same id'
        ELSE ' differs from its run in ' || rtrim(
            CASE WHEN run.session_id IS NOT task.session_id THEN 'session_id, ' ELSE '' END
            || CASE WHEN run.hand_id IS NOT task.hand_id THEN 'hand_id, ' ELSE '' END
            || CASE WHEN run.tool IS NOT task.tool THEN 'tool, ' ELSE '' END
            || CASE WHEN run.args_digest IS NOT task.args_digest THEN 'args_digest, ' ELSE '' END,
            ', '
        )
    END AS message,
    task.session_id AS session_id,
    json_object(
        'task_id', task.task_id,
        'task', json_object('session_id', task.session_id, 'hand_id', task.hand_id, 'tool', task.tool,
            'args_digest', task.args_digest),
        'run', CASE WHEN run.rowid IS NULL THEN NULL ELSE json_object('session_id', run.session_id,
            'hand_id', run.hand_id, 'tool', run.tool, 'args_digest', run.args_digest) END
    ) AS evidence
FROM remote_tasks AS task
LEFT JOIN remote_runs AS run ON run.id = task.task_id
WHERE run.rowid IS NULL
    OR run.session_id IS NOT task.session_id
    OR run.hand_id IS NOT task.hand_id
    OR run.tool IS NOT task.tool
    OR run.args_digest IS NOT task.args_digest
ORDER BY task.rowid
