CREATE TABLE ingest_runs (
    run_id        VARCHAR PRIMARY KEY,
    generation_id VARCHAR NOT NULL,
    started_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP NOT NULL,
    status        VARCHAR NOT NULL,      -- ok | document_errors
    documents     INTEGER NOT NULL,
    chunks        INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    report        JSON NOT NULL
);
