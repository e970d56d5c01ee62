-- All documents in one statement: each parameter is a column, as a list.
INSERT INTO documents
SELECT unnest($doc_ids::VARCHAR[]), unnest($sources::VARCHAR[]), unnest($source_types::VARCHAR[]), unnest($titles::VARCHAR[]),
       unnest($urls::VARCHAR[]), unnest($paths::VARCHAR[]), unnest($tags::VARCHAR[][]), unnest($authors::VARCHAR[][]),
       unnest($updated_ats::TIMESTAMP[]), unnest($metadatas::VARCHAR[])::JSON, unnest($content_hashes::VARCHAR[]),
       unnest($metadata_hashes::VARCHAR[]), unnest($texts::VARCHAR[]), $indexed_at, unnest($etags::VARCHAR[]), unnest($last_modifieds::VARCHAR[]),
       unnest($fetched_ats::TIMESTAMP[]), unnest($links::VARCHAR[][]), unnest($page_starts::INTEGER[][]),
       unnest($anchor_offsets::INTEGER[][]), unnest($anchor_names::VARCHAR[][]);
