-- Chunks of a space by vector id, to write them again (merged into a new segment, or moved to another id).
SELECT vector_id, doc_id, ordinal, heading_path, start_offset, end_offset, token_count, text
-- $low and $high bound the ids asked for: row groups outside them are skipped.
FROM chunks WHERE space_id = $space_id AND vector_id BETWEEN $low AND $high AND vector_id IN (SELECT unnest($vector_ids::INTEGER[]));
