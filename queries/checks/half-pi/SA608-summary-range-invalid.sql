-- rule: SA608
-- requires: context_summaries session_runtime session_runtime.history_generation
-- what: a context summary whose covered range is not 1..to_seq within the session's history_generation
-- Spec §4.5, §10 invariant 4 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
WITH checked AS (
    SELECT
        c.rowid AS row_id,
        c.id,
        c.session_id,
        c.from_seq,
        c.to_seq,
        r.history_generation,
        CASE WHEN c.from_seq IS NOT 1 THEN 'from_seq is ' || quote(c.from_seq) || ', not 1; ' ELSE '' END
        || CASE
            WHEN c.to_seq < c.from_seq OR typeof(c.to_seq) <> 'integer'
                THEN 'to_seq ' || quote(c.to_seq) || ' is below from_seq; '
            ELSE ''
        END
        || CASE
            WHEN r.history_generation IS NOT NULL AND c.to_seq > r.history_generation
                THEN 'to_seq ' || c.to_seq || ' is beyond the session''s history_generation '
                || r.history_generation || '; '
            ELSE ''
        END AS problems
    FROM context_summaries AS c
    LEFT JOIN session_runtime AS r ON r.session_id = c.session_id
)
SELECT
    'context_summaries' AS tbl,
    row_id,
    session_id,
    'context summary ' || id || ' of session ' || session_id || ': ' || rtrim(problems, '; ') AS message,
    json_object(
        'summary_id', id, 'from_seq', from_seq, 'to_seq', to_seq, 'history_generation', history_generation
    ) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
