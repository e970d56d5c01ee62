-- ETag / Last-Modified of every web page, for conditional requests on the next run.
SELECT doc_id, etag, last_modified FROM documents WHERE etag IS NOT NULL OR last_modified IS NOT NULL;
