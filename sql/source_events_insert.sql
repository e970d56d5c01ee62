INSERT INTO source_events VALUES ($run_id, $source, $doc_id, $level, $code, $step, $retryable, $message, $occurred_at);
