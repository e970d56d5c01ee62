-- What a search hit cites of its document, for every document (a server keeps these in memory).
SELECT doc_id, title, url, path, updated_at, source, source_type, page_starts, anchor_offsets, anchor_names FROM documents;
