-- Export of sources for the Parquet dataset: every column, then the partition column day (format is one).
-- Parameters: none. Columns: those of sources, then day DATE (the day of the source's first loaded record).
SELECT s.*, CAST(s.first_at AS DATE) AS day
FROM sources AS s
