-- Table facts: one row per record of the verified evidence (tiny-agent v2 facts, tiny-agent v1 lines after
-- the header, Rivumi events, Half-Pi rows of every table except the credential tables). A corrupt source
-- contributes its verified prefix only.
-- Columns: see docs/warehouse.md ("facts").
CREATE TABLE IF NOT EXISTS facts (
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    run_id VARCHAR,
    seq BIGINT,
    line BIGINT,
    byte_offset BIGINT,
    rowid BIGINT,
    kind VARCHAR,
    type VARCHAR,
    role VARCHAR,
    id VARCHAR,
    timestamp TIMESTAMP,
    payload JSON
);
