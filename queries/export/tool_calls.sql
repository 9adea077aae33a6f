-- Export of tool_calls for the Parquet dataset: every column, then the partition columns format and day.
-- Parameters: none. Columns: those of tool_calls, then format VARCHAR, day DATE (the call's, else the source's).
SELECT x.*, s.format, CAST(coalesce(x.requested_at, x.finished_at, s.first_at) AS DATE) AS day
FROM tool_calls AS x
LEFT JOIN sources AS s USING (source_id)
