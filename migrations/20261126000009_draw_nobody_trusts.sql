-- A draw nobody has to trust (issue #42, design.md decision 42).

-- The entry log: every entry, committed before its 202. Redis keeps only the fast duplicate
-- check; restoring a sale and the draw itself read the entrants from here.
-- `leaf` = SHA-256("{voucher_id}:{user_id}:{salt hex}"), the entry as the draw publishes it.
CREATE TABLE draw_log (
    voucher_id  BIGINT NOT NULL REFERENCES draws (voucher_id),
    user_id     BIGINT NOT NULL,
    salt        BYTEA NOT NULL CHECK (length(salt) = 16),
    leaf        BYTEA NOT NULL CHECK (length(leaf) = 32),
    entered_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (voucher_id, user_id),
    CONSTRAINT draw_log_one_leaf UNIQUE (voucher_id, leaf)
);

-- The draw's public record, filled as it becomes known:
--   at creation: the commitment (as before) and the beacon round named (NULL: no beacon);
--   at close: `closed_at`, `entries_root` and `entrants` (nothing enters after `closed_at`: an
--     entry's insert takes this row FOR SHARE, the close takes it FOR UPDATE);
--   at the draw: the round's `randomness`, the `draw_seed`, `stock_at_draw`, `winners` and
--     `drawn_at` (with the ranking in `draw_entries`).
ALTER TABLE draws
    DROP CONSTRAINT IF EXISTS draws_check,
    ADD COLUMN beacon_url TEXT,
    ADD COLUMN beacon_chain_hash TEXT,
    ADD COLUMN beacon_round BIGINT CHECK (beacon_round > 0),
    ADD COLUMN planned_round BIGINT CHECK (planned_round > 0),
    ADD COLUMN closed_at TIMESTAMPTZ,
    ADD COLUMN entries_root BYTEA CHECK (length(entries_root) = 32),
    ADD COLUMN randomness BYTEA,
    ADD COLUMN draw_seed BYTEA CHECK (length(draw_seed) = 32),
    ADD COLUMN stock_at_draw INTEGER CHECK (stock_at_draw >= 0),
    ADD COLUMN winners INTEGER CHECK (winners >= 0),
    ADD CONSTRAINT draws_closed_with_root
        CHECK ((closed_at IS NULL) = (entries_root IS NULL)),
    ADD CONSTRAINT draws_drawn_after_close
        CHECK (drawn_at IS NULL OR closed_at IS NOT NULL),
    ADD CONSTRAINT draws_beacon_whole
        CHECK ((beacon_url IS NULL) = (beacon_round IS NULL)
               AND (beacon_url IS NULL) = (beacon_chain_hash IS NULL));

-- The ranking now ranks leaves: `tag` holds each leaf's key, HMAC-SHA256(draw_seed, leaf).
-- Units given down the ranking after the draw (the transcript's `moves`) are not stored apart:
-- they are the orders of entrants ranked past `winners`, in order, read from `orders`.
ALTER TABLE draw_entries ADD COLUMN leaf BYTEA CHECK (length(leaf) = 32);
