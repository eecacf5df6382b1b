-- Every sale ever run, found fast (issue #55, decision 52): newest first by start, keyset-paged
-- on (begins_at, id); any part of a title, Chinese too, by trigram (pg_trgm is a trusted
-- extension since PostgreSQL 13: the database's owner may create it).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX vouchers_newest ON vouchers (begins_at DESC, id DESC);
CREATE INDEX vouchers_title_trgm ON vouchers USING gin (title gin_trgm_ops);
