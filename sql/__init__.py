"""DuckDB DDL and named queries, one statement per file, loaded by `indexer.sql.load_sql`."""
