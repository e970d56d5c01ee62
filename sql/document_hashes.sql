SELECT doc_id, content_hash FROM documents;
