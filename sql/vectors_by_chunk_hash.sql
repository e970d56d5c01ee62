-- One vector id per distinct chunk text of a space: the vector cache of the previous generation.
SELECT chunk_hash, min(vector_id) AS vector_id FROM chunks WHERE space_id = $space_id GROUP BY chunk_hash;
