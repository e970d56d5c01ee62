INSERT INTO documents VALUES ($doc_id, $source, $source_type, $title, $url, $path, $tags, $authors, $updated_at, $metadata, $content_hash, $metadata_hash, $text, $indexed_at, $etag, $last_modified);
