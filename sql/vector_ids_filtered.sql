-- The vector ids of one space that pass the search filters; a NULL filter is no filter.
SELECT c.vector_id
FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
WHERE c.space_id = $space_id
  AND ($source IS NULL OR d.source = $source)
  AND ($scope_sources IS NULL OR list_contains($scope_sources::VARCHAR[], d.source))
  AND ($source_type IS NULL OR d.source_type = $source_type)
  AND ($doc_id IS NULL OR d.doc_id = $doc_id)
  AND ($updated_after IS NULL OR d.updated_at >= $updated_after)
  AND ($updated_before IS NULL OR d.updated_at < $updated_before)
ORDER BY c.vector_id;
