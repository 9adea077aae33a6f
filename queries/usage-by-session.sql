-- Token usage and cost per session, with the models it used and the time span of its usage records.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only usage recorded on or after this day (UTC); default: no lower bound
--   $until   DATE     only usage recorded on or before this day (UTC); default: no upper bound
-- Columns:
--   format       VARCHAR        the source format
--   path         VARCHAR        the source as named when it was loaded
--   session_id   VARCHAR        the session; NULL where the log names none
--   first_at     TIMESTAMP      the earliest usage record's time (UTC)
--   last_at      TIMESTAMP      the latest usage record's time (UTC)
--   models       VARCHAR[]      the models of its records, sorted (records without a model left out)
--   records      BIGINT         usage records summed
--   input        HUGEINT        input tokens not served from or written to a cache
--   cache_read   HUGEINT        input tokens served from a cache
--   cache_write  HUGEINT        input tokens written to a cache
--   input_total  HUGEINT        input + cache_read + cache_write
--   output       HUGEINT        output tokens (reasoning included)
--   cost_usd     DECIMAL(38,9)  USD, summed over the records with a cost; NULL when none has one
--   unpriced     BIGINT         records without a cost (their model's prices are unknown)
SELECT
    s.format,
    s.path,
    u.session_id,
    min(u.timestamp) AS first_at,
    max(u.timestamp) AS last_at,
    list(DISTINCT u.model ORDER BY u.model) FILTER (WHERE u.model IS NOT NULL) AS models,
    count(*) AS records,
    sum(u.input) AS input,
    sum(u.cache_read) AS cache_read,
    sum(u.cache_write) AS cache_write,
    sum(u.input_total) AS input_total,
    sum(u.output) AS output,
    sum(u.cost_usd) AS cost_usd,
    count(*) FILTER (WHERE u.cost_usd IS NULL) AS unpriced
FROM usage AS u
JOIN sources AS s USING (source_id)
WHERE ($format IS NULL OR s.format = $format)
    AND ($since IS NULL OR u.timestamp >= CAST($since AS DATE))
    AND ($until IS NULL OR u.timestamp < CAST($until AS DATE) + INTERVAL 1 DAY)
GROUP BY s.format, s.path, u.source_id, u.session_id
ORDER BY first_at NULLS LAST, s.format, s.path, u.session_id NULLS LAST;
