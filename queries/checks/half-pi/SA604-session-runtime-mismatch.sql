-- rule: SA604
-- requires: sessions messages session_runtime session_runtime.history_generation
-- what: a session without its session_runtime row, or a runtime whose history_generation is not the last seq
-- Spec §4.3, §4.4, §10 invariant 2 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
-- A runtime row whose session does not exist is a foreign-key violation (SA602), not reported here.
SELECT
    'sessions' AS tbl,
    s.rowid AS row_id,
    s.id AS session_id,
    'session ' || s.id || ' has no session_runtime row (Half-Pi creates it in the same transaction'
    || ' as the session)' AS message,
    json_object('session_id', s.id) AS evidence
FROM sessions AS s
WHERE NOT EXISTS (SELECT 1 FROM session_runtime AS r WHERE r.session_id = s.id)
UNION ALL
SELECT
    'session_runtime' AS tbl,
    x.row_id,
    x.session_id,
    'session ' || x.session_id || ': history_generation is ' || quote(x.history_generation)
    || ' but its messages end at seq ' || x.last_seq || ' (' || x.message_count || ' messages)' AS message,
    json_object(
        'history_generation', x.history_generation, 'last_seq', x.last_seq, 'messages', x.message_count
    ) AS evidence
FROM (
    SELECT
        r.rowid AS row_id,
        r.session_id,
        r.history_generation,
        (SELECT coalesce(max(m.seq), 0) FROM messages AS m WHERE m.session_id = r.session_id) AS last_seq,
        (SELECT count(*) FROM messages AS m WHERE m.session_id = r.session_id) AS message_count
    FROM session_runtime AS r
    WHERE EXISTS (SELECT 1 FROM sessions AS s WHERE s.id = r.session_id)
) AS x
WHERE x.history_generation IS NOT x.last_seq
ORDER BY tbl, row_id
