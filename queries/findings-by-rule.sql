-- Findings per rule: how often each rule fired, in how many sources and sessions, most frequent first.
--
-- Parameters:
--   $format    VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $severity  VARCHAR  only findings of this severity (error, warning, note); default: every severity
-- Columns:
--   rule            VARCHAR  the rule code (SA205)
--   name            VARCHAR  the rule name (seq-mismatch)
--   severity        VARCHAR  error, warning or note
--   verdict_effect  VARCHAR  the verdict the rule imposes (corrupt, …), NULL for none
--   findings        BIGINT   findings of this rule
--   sources         BIGINT   distinct sources with such a finding
--   sessions        BIGINT   distinct sessions named by such a finding
SELECT
    f.rule,
    f.name,
    f.severity,
    f.verdict_effect,
    count(*) AS findings,
    count(DISTINCT f.source_id) AS sources,
    count(DISTINCT (f.source_id, f.session_id)) FILTER (WHERE f.session_id IS NOT NULL) AS sessions
FROM findings AS f
JOIN sources AS s USING (source_id)
WHERE ($format IS NULL OR s.format = $format)
    AND ($severity IS NULL OR f.severity = $severity)
GROUP BY f.rule, f.name, f.severity, f.verdict_effect
ORDER BY findings DESC, f.rule, f.severity;
