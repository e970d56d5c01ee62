-- Document rows but their text, to keep a document's last good version in the next generation
-- (the text is read when needed: document_texts_by_ids).
SELECT doc_id, source, source_type, title, url, path, tags, authors, updated_at, metadata, etag, last_modified, fetched_at, links, page_starts, anchor_offsets, anchor_names
FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
