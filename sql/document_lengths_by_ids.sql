-- The lengths in characters of stored documents' texts: what the delete guard compares a changed document with.
SELECT doc_id, length(text) FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
