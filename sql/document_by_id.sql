SELECT doc_id, source, source_type, title, url, path, tags, authors, updated_at, metadata, content_hash, text,
       (SELECT count(*) FROM chunks c WHERE c.doc_id = documents.doc_id) AS chunk_count
FROM documents WHERE doc_id = $doc_id;
