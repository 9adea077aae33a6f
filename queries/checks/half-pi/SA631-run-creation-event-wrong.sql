-- rule: SA631
-- requires: remote_runs remote_run_events
-- what: a run has no event 1, or event 1 is not ('', created, created) at the run's created_at
-- Spec §4.9, §7.1, §10 invariant 7 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
-- Located at the event 1 row when there is one, else at the remote_runs row.
SELECT
    CASE WHEN event.rowid IS NULL THEN 'remote_runs' ELSE 'remote_run_events' END AS tbl,
    coalesce(event.rowid, run.rowid) AS row_id,
    'run ' || run.id || CASE
        WHEN event.rowid IS NULL THEN ' has no event with seq 1 (its creation event)'
        WHEN event.from_status <> '' OR event.to_status <> 'created' OR event.type <> 'created' THEN
            ': event 1 is (' || quote(event.from_status) || ', ' || quote(event.to_status) || ', '
            || quote(event.type) || '), not ('''', ''created'', ''created'')'
        ELSE ': event 1 is at ' || event.created_at || ' but the run was created at ' || run.created_at
    END AS message,
    run.session_id AS session_id,
    json_object(
        'run_id', run.id,
        'run_created_at', run.created_at,
        'event', CASE WHEN event.rowid IS NULL THEN NULL ELSE json_object(
            'from_status', event.from_status, 'to_status', event.to_status, 'type', event.type,
            'created_at', event.created_at
        ) END
    ) AS evidence
FROM remote_runs AS run
LEFT JOIN remote_run_events AS event ON event.run_id = run.id AND event.seq = 1
WHERE event.rowid IS NULL
    OR event.from_status <> ''
    OR event.to_status <> 'created'
    OR event.type <> 'created'
    OR event.created_at IS NOT run.created_at
ORDER BY run.rowid
