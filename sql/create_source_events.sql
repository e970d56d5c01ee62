-- What went wrong (or is worth knowing) during a run, one row per event.
CREATE TABLE source_events (
    run_id    VARCHAR NOT NULL,
    source    VARCHAR,
    doc_id    VARCHAR,
    level     VARCHAR NOT NULL,          -- error | warning
    code      VARCHAR NOT NULL,
    step      VARCHAR NOT NULL,          -- list | fetch | extract | chunk | embed | plan
    retryable BOOLEAN NOT NULL,
    message   VARCHAR NOT NULL,
    occurred_at TIMESTAMP NOT NULL
);
