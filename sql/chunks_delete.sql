-- Chunk rows of a space that did not stay as they were (by vector id), from a copy of the previous generation's file.
DELETE FROM chunks WHERE space_id = $space_id AND vector_id IN (SELECT unnest($vector_ids::INTEGER[]));
