-- Tool calls per format and tool: how they ended, with failure and unknown-outcome rates.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only calls asked for on or after this day (UTC); default: no lower bound
--   $until   DATE     only calls asked for on or before this day (UTC); default: no upper bound
-- Columns:
--   format        VARCHAR  the source format
--   tool_name     VARCHAR  the tool
--   calls         BIGINT   tool calls
--   succeeded     BIGINT   calls that ran and succeeded
--   failed        BIGINT   calls that ran and failed (an error, a timeout, a cancellation)
--   answered      BIGINT   calls answered without saying whether they succeeded (Half-Pi local tools)
--   not_executed  BIGINT   calls answered without running (denied, aborted before execution, truncated)
--   unknown       BIGINT   calls that started or may have started and whose outcome nobody knows
--   not_started   BIGINT   calls asked for that neither started nor were answered
--   failure_rate  DOUBLE   failed / (succeeded + failed), rounded to 4 places; NULL without either
--   unknown_rate  DOUBLE   unknown / calls, rounded to 4 places
SELECT
    s.format,
    t.tool_name,
    count(*) AS calls,
    count(*) FILTER (WHERE t.status = 'succeeded') AS succeeded,
    count(*) FILTER (WHERE t.status = 'failed') AS failed,
    count(*) FILTER (WHERE t.status = 'answered') AS answered,
    count(*) FILTER (WHERE t.status = 'not-executed') AS not_executed,
    count(*) FILTER (WHERE t.status = 'unknown') AS unknown,
    count(*) FILTER (WHERE t.status = 'not-started') AS not_started,
    round(
        count(*) FILTER (WHERE t.status = 'failed')
        / nullif(count(*) FILTER (WHERE t.status IN ('succeeded', 'failed')), 0),
        4
    ) AS failure_rate,
    round(count(*) FILTER (WHERE t.status = 'unknown') / count(*), 4) AS unknown_rate
FROM tool_calls AS t
JOIN sources AS s USING (source_id)
WHERE ($format IS NULL OR s.format = $format)
    AND ($since IS NULL OR t.requested_at >= CAST($since AS DATE))
    AND ($until IS NULL OR t.requested_at < CAST($until AS DATE) + INTERVAL 1 DAY)
GROUP BY s.format, t.tool_name
ORDER BY s.format, t.tool_name NULLS LAST;
