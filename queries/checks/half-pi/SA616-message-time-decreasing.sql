-- rule: SA616
-- requires: messages
-- what: within a session, a message created earlier than the message before it by seq (wall clock)
-- Spec §2, §10 invariant 6 (S). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'messages' AS tbl,
    x.row_id,
    x.session_id,
    'session ' || x.session_id || ': message seq ' || x.seq || ' (id ' || x.id || ') was created at '
    || x.created_at || ', before the message before it (seq ' || x.previous_seq || ', '
    || x.previous_created_at || ')' AS message,
    json_object(
        'message_id', x.id, 'seq', x.seq, 'created_at', x.created_at,
        'previous_seq', x.previous_seq, 'previous_created_at', x.previous_created_at
    ) AS evidence
FROM (
    SELECT
        m.rowid AS row_id,
        m.id,
        m.session_id,
        m.seq,
        m.created_at,
        lag(m.seq) OVER ordered AS previous_seq,
        lag(m.created_at) OVER ordered AS previous_created_at
    FROM messages AS m
    WINDOW ordered AS (PARTITION BY m.session_id ORDER BY m.seq, m.id)
) AS x
WHERE x.previous_created_at IS NOT NULL AND x.created_at < x.previous_created_at
ORDER BY x.session_id, x.row_id
