-- The chunk side of a search hit, for a list of vector ids of one space (the document side
-- comes from document_citations, which a server reads once per generation).
SELECT vector_id, chunk_id, doc_id, heading_path, text, start_offset, end_offset
FROM chunks
WHERE space_id = $space_id AND vector_id IN (SELECT unnest($vector_ids::INTEGER[]));
