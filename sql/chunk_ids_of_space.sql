-- Vector ids, ascending, of a space's chunks of the given documents: what a run keeps is chosen by document.
SELECT vector_id FROM chunks
WHERE space_id = $space_id AND doc_id IN (SELECT unnest($doc_ids::VARCHAR[]))
ORDER BY vector_id;
