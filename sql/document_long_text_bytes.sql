-- Bytes of the stored document texts longer than $longer_than bytes (what DuckDB holds in memory to rewrite them).
SELECT coalesce(sum(strlen(text)), 0) FROM documents WHERE strlen(text) > $longer_than;
