-- Table warehouse_meta: facts about the warehouse itself, one row per key.
-- Keys: `schema_version` (the version of these DDL files; a database of another version is refused),
-- `created_by` (the sessaudit version that created the database).
-- Columns: key VARCHAR, value VARCHAR.
CREATE TABLE IF NOT EXISTS warehouse_meta (
    key VARCHAR NOT NULL,
    value VARCHAR
);
