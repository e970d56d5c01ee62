INSERT INTO embedding_spaces VALUES ($space_id, $provider, $model, $dimension, $metric, $normalized, $chunk_tokens, $chunk_overlap, $vector_count, $manifest);
