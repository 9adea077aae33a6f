-- rule: SA614
-- requires: messages
-- what: within a session, a message whose id is lower than the id of the message before it by seq
-- Spec §4.3, §10 invariant 6 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
SELECT
    'messages' AS tbl,
    x.row_id,
    x.session_id,
    'session ' || x.session_id || ': message seq ' || x.seq || ' has id ' || x.id
    || ', lower than id ' || x.previous_id || ' of the message before it (seq ' || x.previous_seq
    || '); appends are serialized, so ids grow with seq' AS message,
    json_object('message_id', x.id, 'seq', x.seq, 'previous_id', x.previous_id, 'previous_seq', x.previous_seq)
    AS evidence
FROM (
    SELECT
        m.rowid AS row_id,
        m.id,
        m.session_id,
        m.seq,
        lag(m.id) OVER ordered AS previous_id,
        lag(m.seq) OVER ordered AS previous_seq
    FROM messages AS m
    WINDOW ordered AS (PARTITION BY m.session_id ORDER BY m.seq, m.id)
) AS x
WHERE x.previous_id IS NOT NULL AND x.id < x.previous_id
ORDER BY x.session_id, x.row_id
