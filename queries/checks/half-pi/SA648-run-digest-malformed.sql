-- rule: SA648
-- requires: remote_runs
-- what: a remote run's args_digest is not 64 lowercase hex without prefix
-- Spec §4.8, §6.3, §10 invariants 14 and 21 (P). Parameters: none. Output: tbl, row_id, message, session_id,
-- evidence. A task's digest equals its run's (SA640), so a task is judged through its run.
SELECT
    'remote_runs' AS tbl,
    run.rowid AS row_id,
    'run ' || run.id || ': args_digest is not 64 lowercase hex without prefix; it has '
        || length(run.args_digest) || ' characters' AS message,
    run.session_id AS session_id,
    json_object('run_id', run.id, 'length', length(run.args_digest)) AS evidence
FROM remote_runs AS run
WHERE NOT (
    typeof(run.args_digest) = 'text'
    AND length(run.args_digest) = 64
    AND run.args_digest NOT GLOB '*[^0-9a-f]*'
)
ORDER BY run.rowid
