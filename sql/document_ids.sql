-- Document ids of the generation (to check an index belongs to an evaluation dataset).
SELECT doc_id FROM documents;
