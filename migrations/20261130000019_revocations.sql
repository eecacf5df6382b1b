-- Sessions signed out before their expiry, and users signed out everywhere (decision 30),
-- kept in PostgreSQL as well as Redis: held in Redis alone, a failover to a replica the
-- sign-out had not reached, or a Redis rebuilt empty, forgot them, and a stolen token signed
-- out worked again. Every instance reloads both (PostgreSQL's and Redis's lists, merged, each
-- given what only the other held); a row leaves ten minutes after it refuses nothing (the
-- session expired, or every session a cut-off could refuse has): the reloads prune by these
-- columns.
CREATE TABLE revoked_sessions (
    session_id TEXT PRIMARY KEY,
    -- The session's own expiry (ms since the epoch, Redis's clock).
    expires_ms BIGINT NOT NULL
);
CREATE TABLE revoked_users (
    user_id BIGINT PRIMARY KEY,
    -- Sessions issued at or before it (ms since the epoch, Redis's clock) are refused.
    cut_off_ms BIGINT NOT NULL
);
CREATE INDEX revoked_sessions_by_expiry ON revoked_sessions (expires_ms);
CREATE INDEX revoked_users_by_cut_off ON revoked_users (cut_off_ms);
