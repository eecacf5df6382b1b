-- How each admin's action ended, as a kind and a code rather than English words: `refused` (the
-- admin's or the sale's reason, `code` the API's error code, which the page says in the reader's
-- language) or `failed` (the shop could not finish it: a store out of reach, a lock held
-- elsewhere). A failure was recorded as a refusal, in English, on every page. Rows without an
-- `outcome` (written before, or by an instance of the version before during a rolling upgrade)
-- are read as they were: `refused` when they carry words, `done` otherwise.
ALTER TABLE admin_actions
    ADD COLUMN outcome TEXT CHECK (outcome IN ('done', 'refused', 'failed')),
    ADD COLUMN code TEXT;
COMMENT ON COLUMN admin_actions.refusal IS 'Why it was refused or failed, in English, as the log line says it.';
