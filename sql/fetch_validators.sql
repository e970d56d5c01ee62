-- What each document's last fetch knew (HTTP validators, Notion's last_edited_time, links), for the next run.
SELECT doc_id, etag, last_modified, fetched_at, links FROM documents
WHERE etag IS NOT NULL OR last_modified IS NOT NULL OR fetched_at IS NOT NULL;
