-- The length in characters and a digest of stored documents' texts: what the delete guard compares a changed
-- document with (a remnant of its text; one text that documents different before now share).
SELECT doc_id, length(text), md5(text) FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
