-- One row per chunk per embedding space. vector_id is the row in that space's
-- index.faiss and lexical index (0 .. n-1, no gaps).
CREATE TABLE chunks (
    space_id     VARCHAR NOT NULL,
    vector_id    INTEGER NOT NULL,
    chunk_id     VARCHAR NOT NULL UNIQUE,
    doc_id       VARCHAR NOT NULL,
    ordinal      INTEGER NOT NULL,       -- position within the document, from 0
    heading_path VARCHAR[] NOT NULL,
    start_offset INTEGER NOT NULL,       -- text = documents.text[start_offset:end_offset] (characters)
    end_offset   INTEGER NOT NULL,
    token_count  INTEGER NOT NULL,       -- cl100k_base tokens
    chunk_hash   VARCHAR NOT NULL,       -- sha256(text)
    text         VARCHAR NOT NULL,
    PRIMARY KEY (space_id, vector_id)
);
