INSERT INTO chunks VALUES ($space_id, $vector_id, $chunk_id, $doc_id, $ordinal, $heading_path, $start_offset, $end_offset, $token_count, $chunk_hash, $text);
