-- A sale opens first come, first served, or by a draw among the shoppers who entered before it
-- (design.md decision 34). A draw's entries open at `entries_open_at`, before `begins_at` when
-- the voucher is created (an admin ending the sale early may move `begins_at` before it).
ALTER TABLE vouchers
    ADD COLUMN opening TEXT NOT NULL DEFAULT 'first_come'
        CHECK (opening IN ('first_come', 'draw')),
    ADD COLUMN entries_open_at TIMESTAMPTZ,
    ADD CONSTRAINT vouchers_draw_has_entries
        CHECK ((opening = 'draw') = (entries_open_at IS NOT NULL));

-- One row per draw sale, written with the voucher. `seed` is secret until the draw has run;
-- `commitment` = SHA-256(seed) is public from the start. `drawn_at` and `entrants` are set once
-- the ranking is recorded in `draw_entries`, in the same transaction.
CREATE TABLE draws (
    voucher_id  BIGINT PRIMARY KEY REFERENCES vouchers (id),
    seed        BYTEA NOT NULL CHECK (length(seed) = 32),
    commitment  BYTEA NOT NULL CHECK (length(commitment) = 32),
    drawn_at    TIMESTAMPTZ,
    entrants    INTEGER CHECK (entrants >= 0),
    CHECK ((drawn_at IS NULL) = (entrants IS NULL))
);

-- A draw's ranking: every entrant with their tag (HMAC-SHA256(seed, user ID)), rank 0 first.
CREATE TABLE draw_entries (
    voucher_id  BIGINT NOT NULL REFERENCES draws (voucher_id),
    rank        INTEGER NOT NULL CHECK (rank >= 0),
    user_id     BIGINT NOT NULL,
    tag         BYTEA NOT NULL CHECK (length(tag) = 32),
    PRIMARY KEY (voucher_id, rank),
    CONSTRAINT draw_entries_one_per_shopper UNIQUE (voucher_id, user_id)
);
