-- Export of findings for the Parquet dataset: every column, then the partition columns format and day.
-- Parameters: none. Columns: those of findings, then format VARCHAR, day DATE (the day of the source's first
-- loaded record).
SELECT x.*, s.format, CAST(s.first_at AS DATE) AS day
FROM findings AS x
LEFT JOIN sources AS s USING (source_id)
