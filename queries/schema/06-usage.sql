-- Table usage: the usage ledger, one row per usage record of the logs (tiny-agent v2 usage facts, usage of
-- tiny-agent v1 assistant and compaction lines, Rivumi model.completed and role_lane.completed events,
-- Half-Pi context_summaries rows, Claude Code API responses), counters in CONTRACT §4's one meaning. Never a
-- manifest's totals. Each row is priced as it is loaded (sessaudit.prices): cost_usd, price_source, price_since, price_note.
-- Columns: see docs/warehouse.md ("usage").
CREATE TABLE IF NOT EXISTS usage (
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    run_id VARCHAR,
    seq BIGINT,
    line BIGINT,
    rowid BIGINT,
    record_id VARCHAR,
    timestamp TIMESTAMP,
    scope VARCHAR NOT NULL,
    provider VARCHAR,
    model VARCHAR,
    input BIGINT NOT NULL,
    output BIGINT NOT NULL,
    cache_read BIGINT NOT NULL,
    cache_write BIGINT NOT NULL,
    input_total BIGINT NOT NULL,
    reasoning BIGINT,
    cache_write_5m BIGINT,
    cache_write_1h BIGINT,
    placeholder BOOLEAN,
    cost_usd DECIMAL(18, 9),
    price_source VARCHAR,
    price_since DATE,
    price_note VARCHAR
);
