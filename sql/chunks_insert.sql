-- All chunks of one space in one statement: each parameter is a column, as a list.
INSERT INTO chunks
SELECT $space_id, unnest($vector_ids::INTEGER[]), unnest($chunk_ids::VARCHAR[]), unnest($doc_ids::VARCHAR[]), unnest($ordinals::INTEGER[]),
       unnest($heading_paths::VARCHAR[][]), unnest($start_offsets::INTEGER[]), unnest($end_offsets::INTEGER[]), unnest($token_counts::INTEGER[]),
       unnest($chunk_hashes::VARCHAR[]), unnest($texts::VARCHAR[]);
