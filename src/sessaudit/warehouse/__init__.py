"""The DuckDB warehouse (CONTRACT §7): verified sources loaded into one database, bundled queries, Parquet.

The only package that imports duckdb and pyarrow, so importing this package itself stays light: the CLI
imports its modules only when `load` or `query` runs, and `verify` never pays for them.
`loader.load` verifies and loads, `queries.run_sql` answers a bundled or ad-hoc query on a database opened
read-only, `parquet.export_parquet` writes the tables as a Hive-partitioned dataset."""

from enum import StrEnum


class QueryFormat(StrEnum):
    """How `sessaudit query` writes its answer (the renderers are `render.RENDERERS`)."""

    TABLE = "table"
    CSV = "csv"
    JSON = "json"
