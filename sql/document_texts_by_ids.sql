-- The texts of documents kept from the previous generation, read when first needed.
SELECT doc_id, text FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
