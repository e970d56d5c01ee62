-- Everything a chatbot needs to cite a chunk, for a list of vector ids of one space.
SELECT c.vector_id, c.chunk_id, c.doc_id, d.title, d.url, d.path, c.heading_path, c.text,
       c.start_offset, c.end_offset, d.updated_at, d.source, d.source_type
FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
WHERE c.space_id = $space_id AND c.vector_id IN (SELECT unnest($vector_ids::INTEGER[]));
