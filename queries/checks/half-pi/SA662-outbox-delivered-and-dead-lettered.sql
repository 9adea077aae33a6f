-- rule: SA662
-- requires: lifecycle_outbox
-- what: an outbox row is both delivered and dead-lettered
-- Spec §4.15, §10 invariant 18 (H): both updates require the other column to be 0.
-- Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'lifecycle_outbox' AS tbl,
    outbox.rowid AS row_id,
    'outbox row ' || outbox.id || ' (' || outbox.event_type || ') has delivered_at ' || outbox.delivered_at
        || ' and dead_letter_at ' || outbox.dead_letter_at AS message,
    outbox.subject_id AS session_id,
    json_object('id', outbox.id, 'event_type', outbox.event_type, 'delivered_at', outbox.delivered_at,
        'dead_letter_at', outbox.dead_letter_at) AS evidence
FROM lifecycle_outbox AS outbox
WHERE outbox.delivered_at <> 0 AND outbox.dead_letter_at <> 0
ORDER BY outbox.rowid
