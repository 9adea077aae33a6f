-- Export of runs for the Parquet dataset: every column, then the partition columns format and day.
-- Parameters: none. Columns: those of runs, then format VARCHAR, day DATE (the run's start, else the source's).
SELECT x.*, s.format, CAST(coalesce(x.started_at, s.first_at) AS DATE) AS day
FROM runs AS x
LEFT JOIN sources AS s USING (source_id)
