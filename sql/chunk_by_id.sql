SELECT c.chunk_id, c.space_id, c.vector_id, c.doc_id, c.ordinal, c.heading_path, c.start_offset, c.end_offset,
       c.token_count, c.chunk_hash, c.text, d.title, d.url, d.path, d.updated_at
FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
WHERE c.chunk_id = $chunk_id;
