-- Export of sessions for the Parquet dataset: every column, then the partition column day (format is one).
-- Parameters: none. Columns: those of sessions, then day DATE (the session's first record, else the source's).
SELECT x.*, CAST(coalesce(x.started_at, s.first_at) AS DATE) AS day
FROM sessions AS x
LEFT JOIN sources AS s USING (source_id)
