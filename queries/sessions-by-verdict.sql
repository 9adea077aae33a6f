-- Sessions per format and verdict, with their facts, what was loaded of them, and their open runs.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
-- Columns:
--   format        VARCHAR  the source format
--   verdict       VARCHAR  clean, repairable, needs-recovery, unsupported, unreadable or corrupt
--   sessions      BIGINT   sessions with this verdict
--   facts         HUGEINT  facts the verify report counts for them
--   facts_loaded  HUGEINT  of those, the facts loaded (a corrupt session loads its verified prefix)
--   open_runs     HUGEINT  runs left open
--   incomplete    BIGINT   sessions whose source was loaded only in part (a verified prefix)
SELECT
    s.format,
    s.verdict,
    count(*) AS sessions,
    sum(s.facts) AS facts,
    sum(s.facts_loaded) AS facts_loaded,
    sum(s.open_runs) AS open_runs,
    count(*) FILTER (WHERE NOT s.complete) AS incomplete
FROM sessions AS s
WHERE ($format IS NULL OR s.format = $format)
GROUP BY s.format, s.verdict
ORDER BY s.format NULLS LAST, s.verdict;
