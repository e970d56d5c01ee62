CREATE TABLE ingest_runs (
    run_id          VARCHAR PRIMARY KEY,
    generation_id   VARCHAR NOT NULL,
    started_at      TIMESTAMP NOT NULL,
    finished_at     TIMESTAMP NOT NULL,
    status          VARCHAR NOT NULL,      -- success | partial (published with document errors); older generations: ok | document_errors
    providers       VARCHAR[] NOT NULL,    -- the providers whose spaces were rebuilt
    added           INTEGER NOT NULL,      -- documents, by decision
    updated         INTEGER NOT NULL,
    metadata_only   INTEGER NOT NULL,
    skipped         INTEGER NOT NULL,
    deleted         INTEGER NOT NULL,
    failed          INTEGER NOT NULL,
    documents       INTEGER NOT NULL,      -- in this generation
    chunks          INTEGER NOT NULL,      -- in this generation, all spaces
    chunks_embedded INTEGER NOT NULL,      -- sent to a provider this run
    chunks_reused   INTEGER NOT NULL,      -- kept or taken from the vector cache
    tokens_embedded BIGINT NOT NULL,
    cost_usd        DOUBLE NOT NULL,       -- estimated, from the model registry's prices
    errors          INTEGER NOT NULL,
    report          JSON NOT NULL          -- the run summary (index run --json)
);
