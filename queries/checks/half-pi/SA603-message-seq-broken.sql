-- rule: SA603
-- requires: messages
-- what: a message whose seq breaks its session's 1..N sequence (not an integer, below 1, repeated or after a gap)
-- Spec §4.3, §10 invariant 2 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence (message_id, seq).
SELECT
    'messages' AS tbl,
    m.rowid AS row_id,
    m.session_id AS session_id,
    'session ' || m.session_id || ': message ' || m.id || ' has seq ' || quote(m.seq) || ', '
    || CASE
        WHEN typeof(m.seq) <> 'integer' THEN 'which is not an integer'
        WHEN m.seq < 1 THEN 'below 1 (a session''s seqs start at 1)'
        WHEN EXISTS (
            SELECT 1 FROM messages AS d
            WHERE d.session_id = m.session_id AND d.seq = m.seq AND d.rowid < m.rowid
        ) THEN 'which an earlier message of the session already has (a duplicate)'
        ELSE 'but no message of the session has seq ' || (m.seq - 1) || ' (a gap)'
    END AS message,
    json_object('message_id', m.id, 'seq', m.seq) AS evidence
FROM messages AS m
WHERE typeof(m.seq) <> 'integer'
    OR m.seq < 1
    OR EXISTS (
        SELECT 1 FROM messages AS d
        WHERE d.session_id = m.session_id AND d.seq = m.seq AND d.rowid < m.rowid
    )
    OR (
        m.seq > 1 AND NOT EXISTS (
            SELECT 1 FROM messages AS p WHERE p.session_id = m.session_id AND p.seq = m.seq - 1
        )
    )
ORDER BY m.session_id, m.rowid
