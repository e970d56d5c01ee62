-- Every chunk of a space in vector-id order, to carry a space over unchanged.
SELECT vector_id, doc_id, ordinal, heading_path, start_offset, end_offset, token_count, text
FROM chunks WHERE space_id = $space_id ORDER BY vector_id;
