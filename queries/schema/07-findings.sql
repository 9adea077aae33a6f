-- Table findings: one row per finding of the verify report, attributed to its source.
-- Columns: see docs/warehouse.md ("findings").
CREATE TABLE IF NOT EXISTS findings (
    source_id VARCHAR NOT NULL,
    rule VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    severity VARCHAR NOT NULL,
    verdict_effect VARCHAR,
    message VARCHAR NOT NULL,
    path VARCHAR,
    session_id VARCHAR,
    line BIGINT,
    byte_offset BIGINT,
    seq BIGINT,
    pointer VARCHAR,
    table_name VARCHAR,
    rowid BIGINT,
    native_code VARCHAR,
    evidence JSON
);
