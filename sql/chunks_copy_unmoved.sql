-- Chunk rows a new file keeps exactly as the previous generation's file (attached as `previous`) has them.
INSERT INTO chunks SELECT * FROM previous.chunks WHERE space_id = $space_id AND vector_id IN (SELECT unnest($vector_ids::INTEGER[]));
