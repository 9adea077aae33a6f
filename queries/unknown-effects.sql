-- Tool calls whose outcome nobody knows: started (or possibly started) and never answered, or answered only
-- by a marker saying so. These are the side effects to check in the world, not in the log.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only calls asked for on or after this day (UTC); default: no lower bound
--   $until   DATE     only calls asked for on or before this day (UTC); default: no upper bound
-- Columns:
--   path                VARCHAR    the source, as it was named when loaded
--   format              VARCHAR    the source format
--   session_id          VARCHAR    the session
--   run_id              VARCHAR    the run that asked for the call
--   tool_name           VARCHAR    the tool
--   tool_call_id        VARCHAR    the call's id (provider call id, Rivumi tool_call_id, Half-Pi run id)
--   target              VARCHAR    where it ran, when elsewhere (a Half-Pi Hand)
--   result_type         VARCHAR    what was recorded instead of a result, if anything
--   recovery_condition  VARCHAR    the open run's condition, when the call is one of its pending effects
--   requested_at        TIMESTAMP  when the call was asked for (UTC)
--   arguments           JSON       the call's arguments, as recorded
SELECT
    s.path,
    s.format,
    t.session_id,
    t.run_id,
    t.tool_name,
    t.tool_call_id,
    t.target,
    t.result_type,
    t.recovery_condition,
    t.requested_at,
    t.arguments
FROM tool_calls AS t
JOIN sources AS s USING (source_id)
WHERE t.status = 'unknown'
    AND ($format IS NULL OR s.format = $format)
    AND ($since IS NULL OR t.requested_at >= CAST($since AS DATE))
    AND ($until IS NULL OR t.requested_at < CAST($until AS DATE) + INTERVAL 1 DAY)
ORDER BY s.path, t.session_id NULLS FIRST, t.run_id NULLS FIRST, t.call_seq NULLS LAST, t.tool_call_id;
