-- Export of facts for the Parquet dataset: every column, then the partition columns format and day.
-- Parameters: none. Columns: those of facts, then format VARCHAR, day DATE (the record's, else the source's).
SELECT x.*, s.format, CAST(coalesce(x.timestamp, s.first_at) AS DATE) AS day
FROM facts AS x
LEFT JOIN sources AS s USING (source_id)
