-- rule: SA663
-- requires: lifecycle_outbox
-- what: an outbox row shows a dispatch attempt (attempts, delivered_at, dead_letter_at, last_error, or available_at moved), which Mind at HEAD never makes
-- Spec §4.15, §10 invariant 18 (P). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
-- The last error text is not echoed (it is free text from a sink); only its length.
SELECT
    'lifecycle_outbox' AS tbl,
    outbox.rowid AS row_id,
    'outbox row ' || outbox.id || ' (' || outbox.event_type || ') was touched by a dispatcher: ' || rtrim(
        CASE WHEN outbox.attempts <> 0 THEN 'attempts ' || outbox.attempts || ', ' ELSE '' END
        || CASE WHEN outbox.delivered_at <> 0 THEN 'delivered_at ' || outbox.delivered_at || ', ' ELSE '' END
        || CASE WHEN outbox.dead_letter_at <> 0 THEN 'dead_letter_at ' || outbox.dead_letter_at || ', ' ELSE '' END
        || CASE WHEN outbox.last_error <> '' THEN 'a last_error, ' ELSE '' END
        || CASE WHEN outbox.available_at IS NOT outbox.created_at
            THEN 'available_at ' || outbox.available_at || ' is not created_at ' || outbox.created_at || ', '
            ELSE '' END,
        ', '
    ) AS message,
    outbox.subject_id AS session_id,
    json_object('id', outbox.id, 'event_type', outbox.event_type, 'attempts', outbox.attempts,
        'delivered_at', outbox.delivered_at, 'dead_letter_at', outbox.dead_letter_at,
        'last_error_length', length(outbox.last_error), 'available_at', outbox.available_at,
        'created_at', outbox.created_at) AS evidence
FROM lifecycle_outbox AS outbox
WHERE outbox.attempts <> 0
    OR outbox.delivered_at <> 0
    OR outbox.dead_letter_at <> 0
    OR outbox.last_error <> ''
    OR outbox.available_at IS NOT outbox.created_at
ORDER BY outbox.rowid
