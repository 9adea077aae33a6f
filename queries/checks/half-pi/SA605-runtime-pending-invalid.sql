-- rule: SA605
-- requires: session_runtime session_runtime.pending_compact session_runtime.pending_compact_id
-- what: a session_runtime row whose pending-compaction fields break the store's pending invariant
-- Spec §4.4, §7.4, §10 invariant 3 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
WITH checked AS (
    SELECT
        r.rowid AS row_id,
        r.session_id,
        r.pending_compact,
        r.pending_compact_id,
        r.pending_attempt,
        r.pending_not_before,
        CASE
            WHEN r.pending_compact IS NOT 0 AND r.pending_compact IS NOT 1
                THEN 'pending_compact is ' || quote(r.pending_compact) || ', not 0 or 1; '
            ELSE ''
        END
        || CASE
            WHEN r.pending_compact IS 1 AND r.pending_compact_id = ''
                THEN 'a compaction is pending but pending_compact_id is empty; '
            WHEN r.pending_compact IS NOT 1 AND r.pending_compact_id <> ''
                THEN 'pending_compact_id is set but no compaction is pending; '
            ELSE ''
        END
        || CASE
            WHEN r.pending_attempt < 0 THEN 'pending_attempt is negative (' || r.pending_attempt || '); '
            ELSE ''
        END
        || CASE
            WHEN r.pending_not_before < 0
                THEN 'pending_not_before is negative (' || r.pending_not_before || '); '
            ELSE ''
        END AS problems
    FROM session_runtime AS r
)
SELECT
    'session_runtime' AS tbl,
    row_id,
    session_id,
    'session ' || session_id || ': ' || rtrim(problems, '; ') AS message,
    json_object(
        'pending_compact', pending_compact,
        'pending_compact_id', pending_compact_id,
        'pending_attempt', pending_attempt,
        'pending_not_before', pending_not_before
    ) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
