-- Moves recorded when they happen (issue #51, decision 49): each unit given down a drawn sale's
-- ranking is appended here once its order is written (or refused), with its reason and the
-- next link of the hash chain that starts at the draw's seed. The transcript reads this table
-- and never recomputes it; a row is never changed or removed.
CREATE TABLE draw_moves (
    voucher_id  BIGINT NOT NULL REFERENCES draws (voucher_id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    user_id     BIGINT NOT NULL,
    leaf        BYTEA NOT NULL CHECK (length(leaf) = 32),
    order_id    BIGINT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('cancelled', 'unpaid', 'refunded', 'added')),
    -- The admission's second (the order ID's), and when the row was written.
    moved_at    TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    hash        BYTEA NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (voucher_id, seq),
    CONSTRAINT draw_moves_one_per_entrant UNIQUE (voucher_id, user_id)
);
