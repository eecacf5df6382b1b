-- Every sign-out row numbered in the order it was recorded or moved later (decision 30): each
-- instance's periodic reload reads only the rows numbered after the last it saw, and both
-- stores in full once a minute. Read in full every 5 s, the lists cost every instance a read
-- of every sign-out of the last session lifetime, which a crowd signing in and out (or a
-- script doing it) grows without bound.
CREATE SEQUENCE revocation_seq;
ALTER TABLE revoked_sessions ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('revocation_seq');
ALTER TABLE revoked_users ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('revocation_seq');
CREATE INDEX revoked_sessions_by_seq ON revoked_sessions (seq);
CREATE INDEX revoked_users_by_seq ON revoked_users (seq);
