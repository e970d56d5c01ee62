-- The titles of documents kept from the previous generation: the lexical index reads them with
-- their chunks (indexer/lexical.py indexed_text), where no other field is needed.
SELECT doc_id, title FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
