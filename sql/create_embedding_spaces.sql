CREATE TABLE embedding_spaces (
    space_id      VARCHAR PRIMARY KEY,
    provider      VARCHAR NOT NULL,
    model         VARCHAR NOT NULL,
    dimension     INTEGER NOT NULL,
    metric        VARCHAR NOT NULL,
    normalized    BOOLEAN NOT NULL,
    chunk_tokens  INTEGER NOT NULL,
    chunk_overlap INTEGER NOT NULL,
    vector_count  INTEGER NOT NULL,
    manifest      JSON NOT NULL          -- the same object as spaces/<space_id>/space.json
);
