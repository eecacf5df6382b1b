-- The admins' actions as a table (issue #55): who did what to what, when, and how it ended, read
-- by the admins' page and `GET /api/admin/actions` newest first (keyset on `id`). The audit
-- line in the log stays; this is the one an admin can read.
CREATE TABLE admin_actions (
    id       BIGSERIAL PRIMARY KEY,
    at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    actor    BIGINT NOT NULL REFERENCES users (id),
    action   TEXT NOT NULL,
    target   TEXT NOT NULL,
    -- NULL when done; the refusal's words otherwise.
    refusal  TEXT
);
