-- Singleton background jobs (src/sweeper.rs): the last run of each, stamped with the fencing
-- token of the lock it ran under. A run holding an older token than the recorded one is
-- refused, so an instance that paused past its lease cannot record over a newer run.
CREATE TABLE job_runs (
    name         TEXT PRIMARY KEY,
    fence        BIGINT NOT NULL,
    instance     TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at  TIMESTAMPTZ,
    report       TEXT
);
