-- rule: SA611
-- requires: context_summaries
-- what: a context summary whose parent or superseded node is missing, belongs to another session, or (for a parent) does not end below it or was made under other versions
-- Spec §4.5, §7.4, §10 invariant 4 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
WITH checked AS (
    SELECT
        c.rowid AS row_id,
        c.id,
        c.session_id,
        c.parent_summary_id,
        c.supersedes_summary_id,
        CASE
            WHEN c.parent_summary_id = '' THEN ''
            WHEN p.id IS NULL THEN 'parent summary ' || c.parent_summary_id || ' does not exist; '
            WHEN p.session_id IS NOT c.session_id
                THEN 'parent summary ' || p.id || ' belongs to session ' || p.session_id || '; '
            ELSE ''
        END
        || CASE
            WHEN p.id IS NOT NULL AND p.to_seq >= c.to_seq
                THEN 'parent summary ' || p.id || ' covers up to seq ' || p.to_seq
                || ', not below this summary''s to_seq ' || c.to_seq || '; '
            ELSE ''
        END
        || CASE
            WHEN p.id IS NOT NULL AND (
                p.projection_version IS NOT c.projection_version OR p.policy_version IS NOT c.policy_version
                OR p.profile IS NOT c.profile
            )
                THEN 'parent summary ' || p.id || ' was made under another profile, policy or projection version; '
            ELSE ''
        END
        || CASE
            WHEN c.supersedes_summary_id = '' THEN ''
            WHEN s.id IS NULL THEN 'superseded summary ' || c.supersedes_summary_id || ' does not exist; '
            WHEN s.session_id IS NOT c.session_id
                THEN 'superseded summary ' || s.id || ' belongs to session ' || s.session_id || '; '
            ELSE ''
        END AS problems
    FROM context_summaries AS c
    LEFT JOIN context_summaries AS p ON c.parent_summary_id <> '' AND p.id = c.parent_summary_id
    LEFT JOIN context_summaries AS s ON c.supersedes_summary_id <> '' AND s.id = c.supersedes_summary_id
)
SELECT
    'context_summaries' AS tbl,
    row_id,
    session_id,
    'context summary ' || id || ' of session ' || session_id || ': ' || rtrim(problems, '; ') AS message,
    json_object(
        'summary_id', id, 'parent_summary_id', parent_summary_id, 'supersedes_summary_id', supersedes_summary_id
    ) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
