-- The run that built a generation (one row per generation).
SELECT run_id, generation_id, started_at, finished_at, status, providers, added, updated, metadata_only, skipped, deleted, failed,
       documents, chunks, chunks_embedded, chunks_reused, tokens_embedded, cost_usd, errors
FROM ingest_runs;
