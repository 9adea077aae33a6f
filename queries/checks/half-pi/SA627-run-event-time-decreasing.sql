-- rule: SA627
-- requires: remote_run_events
-- what: a run event created earlier than the event before it by seq (accepted/running events use the Hand clock)
-- Spec §4.9, §10 invariant 23 (S). Parameters: none. Output: tbl, row_id, message, evidence.
SELECT
    'remote_run_events' AS tbl,
    x.row_id,
    'remote run ' || x.run_id || ': event seq ' || x.seq || ' (' || x.type || ') was created at ' || x.created_at
    || ', before event seq ' || x.previous_seq || ' (' || x.previous_type || ') at ' || x.previous_created_at
    AS message,
    json_object(
        'run_id', x.run_id, 'seq', x.seq, 'created_at', x.created_at,
        'previous_seq', x.previous_seq, 'previous_created_at', x.previous_created_at
    ) AS evidence
FROM (
    SELECT
        e.rowid AS row_id,
        e.run_id,
        e.seq,
        e.type,
        e.created_at,
        lag(e.seq) OVER ordered AS previous_seq,
        lag(e.type) OVER ordered AS previous_type,
        lag(e.created_at) OVER ordered AS previous_created_at
    FROM remote_run_events AS e
    WINDOW ordered AS (PARTITION BY e.run_id ORDER BY e.seq, e.id)
) AS x
WHERE x.previous_created_at IS NOT NULL AND x.created_at < x.previous_created_at
ORDER BY x.run_id, x.row_id
