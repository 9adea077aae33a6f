-- rule: SA630
-- requires: remote_runs remote_run_events
-- what: a run's event seq is not exactly 1..N (a gap after seq 1, a duplicate, or a seq that is not a positive integer)
-- Spec §4.9, §10 invariant 7 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
-- A missing event 1 is SA631's finding (the run has no creation event), so a gap is reported only above it.
SELECT
    'remote_run_events' AS tbl,
    event.rowid AS row_id,
    'run ' || event.run_id || ': event seq ' || quote(event.seq) || CASE
        WHEN typeof(event.seq) <> 'integer' OR event.seq < 1 THEN ' is not a positive integer'
        WHEN EXISTS (
            SELECT 1 FROM remote_run_events AS twin
            WHERE twin.run_id = event.run_id AND twin.seq = event.seq AND twin.rowid < event.rowid
        ) THEN ' occurs twice'
        ELSE ' follows a gap: seq ' || (event.seq - 1) || ' is missing'
    END AS message,
    run.session_id AS session_id,
    json_object('run_id', event.run_id, 'seq', event.seq) AS evidence
FROM remote_run_events AS event
LEFT JOIN remote_runs AS run ON run.id = event.run_id
WHERE typeof(event.seq) <> 'integer'
    OR event.seq < 1
    OR EXISTS (
        SELECT 1 FROM remote_run_events AS twin
        WHERE twin.run_id = event.run_id AND twin.seq = event.seq AND twin.rowid < event.rowid
    )
    OR (
        event.seq > 2
        AND NOT EXISTS (
            SELECT 1 FROM remote_run_events AS previous
            WHERE previous.run_id = event.run_id AND previous.seq = event.seq - 1
        )
    )
ORDER BY event.rowid
