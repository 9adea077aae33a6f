-- Token usage and cost per format, provider and model, summed over the usage ledger (one row per usage record).
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only usage recorded on or after this day (UTC); default: no lower bound
--   $until   DATE     only usage recorded on or before this day (UTC); default: no upper bound
-- Columns:
--   format       VARCHAR        the source format
--   provider     VARCHAR        the provider; NULL where the log does not record it (a tool's own usage)
--   model        VARCHAR        the model; NULL where the log does not record it
--   records      BIGINT         usage records summed
--   sessions     BIGINT         distinct sessions they belong to
--   input        HUGEINT        input tokens not served from or written to a cache
--   cache_read   HUGEINT        input tokens served from a cache
--   cache_write  HUGEINT        input tokens written to a cache
--   input_total  HUGEINT        input + cache_read + cache_write
--   output       HUGEINT        output tokens (reasoning included)
--   cost_usd     DECIMAL(38,9)  USD, summed over the records with a cost; NULL when none has one
--   unpriced     BIGINT         records without a cost (their model's prices are unknown)
SELECT
    s.format,
    u.provider,
    u.model,
    count(*) AS records,
    count(DISTINCT (u.source_id, u.session_id)) AS sessions,
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
GROUP BY s.format, u.provider, u.model
ORDER BY s.format, u.provider NULLS LAST, u.model NULLS LAST;
