-- What the plan step compares against: one row per document of the previous generation.
SELECT doc_id, source, content_hash, metadata_hash, title FROM documents;
