INSERT INTO ingest_runs VALUES ($run_id, $generation_id, $started_at, $finished_at, $status, $documents, $chunks, $errors, $report);
