-- "Remind me when it starts" (issue #56, decision 53): one row per shopper and sale, the outbox
-- the reminder sender claims from. `id` names the message: the same on every attempt, so the
-- SMS relay can tell a repeat. A row is claimed for `claimed_until` by the instance sending it
-- (`FOR UPDATE SKIP LOCKED`, then the lease), so two instances never send it at once and one
-- killed mid-send leaves it to the next claim after its lease.
CREATE TABLE reminders (
    voucher_id     BIGINT NOT NULL REFERENCES vouchers (id),
    user_id        BIGINT NOT NULL REFERENCES users (id),
    id             TEXT NOT NULL UNIQUE,
    lang           TEXT NOT NULL,
    asked_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    state          TEXT NOT NULL DEFAULT 'waiting'
                       CHECK (state IN ('waiting', 'sent', 'failed', 'late')),
    tries          INT NOT NULL DEFAULT 0,
    next_try_at    TIMESTAMPTZ,
    claimed_until  TIMESTAMPTZ,
    done_at        TIMESTAMPTZ,
    last_error     TEXT,
    PRIMARY KEY (voucher_id, user_id)
);
CREATE INDEX reminders_waiting ON reminders (voucher_id) WHERE state = 'waiting';
