-- Token usage and cost per day (UTC) and format, summed over the usage ledger.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only days on or after this one; default: no lower bound
--   $until   DATE     only days on or before this one; default: no upper bound
-- Columns:
--   day          DATE           the day the usage was recorded (UTC); NULL when the record has no time
--   format       VARCHAR        the source format
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
    CAST(u.timestamp AS DATE) AS day,
    s.format,
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
    AND ($since IS NULL OR CAST(u.timestamp AS DATE) >= CAST($since AS DATE))
    AND ($until IS NULL OR CAST(u.timestamp AS DATE) <= CAST($until AS DATE))
GROUP BY CAST(u.timestamp AS DATE), s.format
ORDER BY day NULLS LAST, s.format;
