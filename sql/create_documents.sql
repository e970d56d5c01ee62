-- One row per document in the generation. Timestamps are UTC.
CREATE TABLE documents (
    doc_id        VARCHAR PRIMARY KEY,   -- notion:<uuid> | url:<normalized url> | file:<relative path>
    source        VARCHAR NOT NULL,      -- the [[sources]] name
    source_type   VARCHAR NOT NULL,      -- files | urls | ...
    title         VARCHAR NOT NULL,
    url           VARCHAR,
    path          VARCHAR,               -- relative path, for files
    tags          VARCHAR[] NOT NULL,
    authors       VARCHAR[] NOT NULL,
    updated_at    TIMESTAMP,             -- the source's own modification time
    metadata      JSON NOT NULL,
    content_hash  VARCHAR NOT NULL,      -- sha256(doc_id || '\n' || text)
    metadata_hash VARCHAR NOT NULL,
    text          VARCHAR NOT NULL,      -- chunk offsets index into this
    indexed_at    TIMESTAMP NOT NULL,
    etag          VARCHAR,               -- HTTP validators of the last fetch (web pages); in no hash
    last_modified VARCHAR,               --   (Notion pages: last_edited_time)
    fetched_at    TIMESTAMP,             -- when that fetch happened
    links         VARCHAR[],             -- where a crawl goes from this document (Notion: page:<id>, database:<id>)
    page_starts   INTEGER[],             -- paged documents (PDF): offset in text where page i + 1 begins
    anchor_offsets INTEGER[],            -- offsets in text of linkable headings, ascending,
    anchor_names  VARCHAR[]              --   and their URL fragments (a hit links to url#fragment)
);
