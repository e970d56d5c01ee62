-- Chunk rows of spaces the new generation no longer has, from a copy of the previous generation's file.
DELETE FROM chunks WHERE NOT list_contains($space_ids::VARCHAR[], space_id);
