-- rule: SA606
-- requires: session_runtime session_runtime.snapshot_version session_runtime.compact_generation
-- what: runtime counters out of order (snapshot_version >= history_view_generation >= history_generation), or an active summary with compact_generation below 1
-- Spec §4.4, §7.4, §10 invariant 3 (P). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
WITH checked AS (
    SELECT
        r.rowid AS row_id,
        r.session_id,
        r.snapshot_version,
        r.history_view_generation,
        r.history_generation,
        r.compact_generation,
        r.active_summary_id,
        CASE
            WHEN r.snapshot_version < r.history_view_generation
                THEN 'snapshot_version ' || r.snapshot_version || ' is below history_view_generation '
                || r.history_view_generation || '; '
            ELSE ''
        END
        || CASE
            WHEN r.history_view_generation < r.history_generation
                THEN 'history_view_generation ' || r.history_view_generation || ' is below history_generation '
                || r.history_generation || '; '
            ELSE ''
        END
        || CASE
            WHEN r.active_summary_id <> '' AND r.compact_generation < 1
                THEN 'a summary is active but compact_generation is ' || r.compact_generation || '; '
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
        'snapshot_version', snapshot_version,
        'history_view_generation', history_view_generation,
        'history_generation', history_generation,
        'compact_generation', compact_generation,
        'active_summary_id', active_summary_id
    ) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
