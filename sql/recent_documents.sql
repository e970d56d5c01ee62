-- A time-only question ("what changed last week?"): one row per document that passes the filters,
-- its first chunk in the space, newest first.
SELECT c.vector_id
FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
WHERE c.space_id = $space_id AND c.ordinal = 0
  AND ($source IS NULL OR d.source = $source)
  AND ($scope_sources IS NULL OR list_contains($scope_sources::VARCHAR[], d.source))
  AND ($source_type IS NULL OR d.source_type = $source_type)
  AND ($doc_id IS NULL OR d.doc_id = $doc_id)
  AND ($updated_after IS NULL OR d.updated_at >= $updated_after)
  AND ($updated_before IS NULL OR d.updated_at < $updated_before)
  AND d.source_type <> 'answers'
ORDER BY d.updated_at DESC NULLS LAST, d.doc_id
LIMIT $limit OFFSET $offset;
