-- Token usage and cost per 5-hour billing block, as ccusage's `blocks` report forms them: usage records in
-- time order; the first starts a block at its time floored to the UTC hour, which ends 5 hours later; a
-- record more than 5 hours after its block's start, or more than 5 hours after the record before it (a
-- gap), starts the next block, again floored to the hour. Records without a time are left out; blocks span
-- every source and session the parameters keep.
--
-- Parameters:
--   $format  VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $since   DATE     only usage recorded on or after this day (UTC); default: no lower bound
--   $until   DATE     only usage recorded on or before this day (UTC); default: no upper bound
-- Columns:
--   block_start  TIMESTAMP      the block's start: its first record's time floored to the hour (UTC)
--   block_end    TIMESTAMP      block_start + 5 hours
--   first_at     TIMESTAMP      its first record's time
--   last_at      TIMESTAMP      its last record's time
--   idle_before  INTERVAL       time from the record before it to its first record (over 5 hours: a gap); NULL for the first block
--   records      BIGINT         usage records summed
--   sessions     BIGINT         distinct sessions they belong to
--   models       VARCHAR[]      the models of its records, sorted (records without a model left out)
--   input        HUGEINT        input tokens not served from or written to a cache
--   cache_read   HUGEINT        input tokens served from a cache
--   cache_write  HUGEINT        input tokens written to a cache
--   input_total  HUGEINT        input + cache_read + cache_write
--   output       HUGEINT        output tokens (reasoning included)
--   cost_usd     DECIMAL(38,9)  USD, summed over the records with a cost; NULL when none has one
--   unpriced     BIGINT         records without a cost (their model's prices are unknown)
SELECT
    p.block_start,
    p.block_start + INTERVAL 5 HOUR AS block_end,
    p.first_at,
    max(p.timestamp) AS last_at,
    any_value(p.idle_before) AS idle_before,
    count(*) AS records,
    count(DISTINCT (p.source_id, p.session_id)) AS sessions,
    list(DISTINCT p.model ORDER BY p.model) FILTER (WHERE p.model IS NOT NULL) AS models,
    sum(p.input) AS input,
    sum(p.cache_read) AS cache_read,
    sum(p.cache_write) AS cache_write,
    sum(p.input_total) AS input_total,
    sum(p.output) AS output,
    sum(p.cost_usd) AS cost_usd,
    count(*) FILTER (WHERE p.cost_usd IS NULL) AS unpriced
FROM (
    WITH RECURSIVE timed AS (
        SELECT u.*
        FROM usage AS u
        JOIN sources AS s USING (source_id)
        WHERE u.timestamp IS NOT NULL
            AND ($format IS NULL OR s.format = $format)
            AND ($since IS NULL OR u.timestamp >= CAST($since AS DATE))
            AND ($until IS NULL OR u.timestamp < CAST($until AS DATE) + INTERVAL 1 DAY)
    ),
    -- each distinct moment, the time since the one before, and its run of moments with no gap over 5 hours
    moments AS (
        SELECT moment, moment - lag(moment) OVER (ORDER BY moment) AS idle
        FROM (SELECT DISTINCT timestamp AS moment FROM timed)
    ),
    runs AS (
        SELECT
            moment,
            idle,
            sum(CASE WHEN idle IS NULL OR idle > INTERVAL 5 HOUR THEN 1 ELSE 0 END)
                OVER (ORDER BY moment ROWS UNBOUNDED PRECEDING) AS run
        FROM moments
    ),
    -- within a run, each block's first moment: the first one more than 5 hours after the last block's start
    blocks (run, first_at, block_start) AS (
        SELECT run, min(moment), date_trunc('hour', min(moment))
        FROM runs
        GROUP BY run
        UNION ALL
        SELECT r.run, min(r.moment), date_trunc('hour', min(r.moment))
        FROM blocks AS b
        JOIN runs AS r ON r.run = b.run AND r.moment > b.block_start + INTERVAL 5 HOUR
        GROUP BY r.run
    )
    -- each record with its block (the latest of its run that starts at or before it)
    SELECT b.block_start, b.first_at, f.idle AS idle_before, t.*
    FROM timed AS t
    JOIN runs AS r ON r.moment = t.timestamp
    ASOF JOIN blocks AS b ON b.run = r.run AND t.timestamp >= b.first_at
    JOIN runs AS f ON f.moment = b.first_at
) AS p
GROUP BY p.block_start, p.first_at
ORDER BY p.block_start;
