-- A time-only question ("what changed last week?"): of the chunks the filters allow
-- (vector_ids_filtered), each document's first, newest document first; curated answers left out.
SELECT c.vector_id
FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
WHERE c.space_id = $space_id AND c.ordinal = 0 AND d.source_type <> 'answers'
  AND c.vector_id IN (SELECT unnest($vector_ids::INTEGER[]))
ORDER BY d.updated_at DESC NULLS LAST, d.doc_id
LIMIT $limit OFFSET $offset;
