-- The live generation's documents that have a URL (of one source; a NULL source is every source),
-- by source and doc_id, with the anchors their hits link to: what `index check-links` samples.
SELECT doc_id, source, source_type, url, anchor_offsets, anchor_names
FROM documents
WHERE url IS NOT NULL AND ($source IS NULL OR source = $source)
ORDER BY source, doc_id;
