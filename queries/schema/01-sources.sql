-- Table sources: one row per verified source (a tiny-agent file, a Rivumi run directory, a Half-Pi store,
-- or a named input that could not be verified). The row of a source is replaced as a whole when the
-- same source (same real_path) is loaded again with a different sha256.
-- Columns: see docs/warehouse.md ("sources").
CREATE TABLE IF NOT EXISTS sources (
    source_id VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    real_path VARCHAR NOT NULL,
    format VARCHAR,
    format_version VARCHAR,
    sha256 VARCHAR,
    bytes BIGINT,
    files JSON,
    evidence_unchanged BOOLEAN,
    verdict VARCHAR NOT NULL,
    sessions INTEGER NOT NULL,
    facts_loaded BIGINT NOT NULL,
    complete BOOLEAN NOT NULL,
    first_at TIMESTAMP,
    last_at TIMESTAMP,
    native JSON,
    sessaudit_version VARCHAR NOT NULL,
    loaded_at TIMESTAMP NOT NULL
);
