-- Table tool_calls: one row per tool call the logs ask for or record (a call of an assistant message, a
-- Rivumi tool.requested, a Half-Pi remote run), with its intent, its result and its status; every pending
-- effect of an open run is a row here, also one that no loaded record names.
-- Columns: see docs/warehouse.md ("tool_calls").
CREATE TABLE IF NOT EXISTS tool_calls (
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    run_id VARCHAR,
    tool_call_id VARCHAR,
    tool_name VARCHAR,
    call_seq BIGINT,
    intent_seq BIGINT,
    result_seq BIGINT,
    intent_id VARCHAR,
    status VARCHAR NOT NULL,
    result_type VARCHAR,
    replay_policy VARCHAR,
    replay_key VARCHAR,
    effect VARCHAR,
    target VARCHAR,
    recovery_condition VARCHAR,
    requested_at TIMESTAMP,
    finished_at TIMESTAMP,
    arguments JSON
);
