-- Documents a run rewrites or removes, from a copy of the previous generation's file.
DELETE FROM documents WHERE doc_id IN (SELECT unnest($doc_ids::VARCHAR[]));
