-- One vector id per distinct chunk text of a space among $chunk_hashes: the vector cache of the previous generation.
SELECT chunk_hash, min(vector_id) AS vector_id FROM chunks
WHERE space_id = $space_id AND chunk_hash IN (SELECT unnest($chunk_hashes::VARCHAR[]))
GROUP BY chunk_hash;
