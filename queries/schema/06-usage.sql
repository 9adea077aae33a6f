-- Table usage: the usage ledger, one row per usage record of the logs (tiny-agent v2 usage facts, usage of
-- tiny-agent v1 assistant and compaction lines, Rivumi model.completed and role_lane.completed events,
-- Half-Pi context_summaries rows), counters in CONTRACT §4's one meaning. Never a manifest's totals.
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
    reasoning BIGINT
);
