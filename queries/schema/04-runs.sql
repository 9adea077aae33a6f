-- Table runs: one row per run of the verify report (runs, compactions, v1 turns, Rivumi runs, Half-Pi
-- remote runs, approvals, tasks and requests), closed ones too, with the recovery of an open one.
-- Columns: see docs/warehouse.md ("runs").
CREATE TABLE IF NOT EXISTS runs (
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    run_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    state VARCHAR NOT NULL,
    condition VARCHAR,
    conditions VARCHAR[],
    seed_kind VARCHAR,
    pending_effects INTEGER NOT NULL,
    assumes VARCHAR[],
    first_seq BIGINT,
    last_seq BIGINT,
    started_at TIMESTAMP,
    last_at TIMESTAMP,
    recovery JSON,
    seed JSON
);
