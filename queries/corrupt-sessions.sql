-- Sessions rejected as corrupt and why: the first finding (by line, then rule) that made them corrupt.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
-- Columns:
--   path          VARCHAR  the source, as it was named when loaded
--   format        VARCHAR  the source format
--   session_id    VARCHAR  the session
--   facts         BIGINT   facts the verify report counts
--   facts_loaded  BIGINT   facts loaded: the verified prefix
--   rule          VARCHAR  the first corrupting finding's rule code
--   name          VARCHAR  its rule name
--   line          BIGINT   its line, when it has one
--   message       VARCHAR  its message
SELECT
    src.path,
    s.format,
    s.session_id,
    s.facts,
    s.facts_loaded,
    f.rule,
    f.name,
    f.line,
    f.message
FROM sessions AS s
JOIN sources AS src USING (source_id)
LEFT JOIN LATERAL (
    SELECT f.rule, f.name, f.line, f.message
    FROM findings AS f
    WHERE f.source_id = s.source_id
        AND f.verdict_effect = 'corrupt'
        AND (f.session_id IS NULL OR f.session_id IS NOT DISTINCT FROM s.session_id)
    ORDER BY f.line NULLS LAST, f.rowid NULLS LAST, f.rule
    LIMIT 1
) AS f ON TRUE
WHERE s.verdict = 'corrupt'
    AND ($format IS NULL OR s.format = $format)
ORDER BY src.path, s.session_id NULLS FIRST;
