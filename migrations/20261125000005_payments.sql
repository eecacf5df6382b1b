-- Real payments (issue #32): hosted payment sessions (Stripe Checkout), the provider's
-- notifications applied once, late payments refunded, free orders complete once written.

-- A free voucher's order is `confirmed` when written: nothing to pay, no deadline.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_known
    CHECK (status IN ('created', 'paid', 'cancelled', 'confirmed'));

-- Every hosted payment the shop opened for an order (src/orders/settle.rs):
--   open        the shopper may pay on the provider's page
--   paid        it paid its order
--   closed      it ended without money (expired, an asynchronous method failed)
--   flagged     money taken that does not match the order (amount or currency): the order is
--               not paid, an admin sees it; refunded if the order is cancelled
--   refund_due  money taken for an order that cannot have it (cancelled, or already paid by
--               another session): the refund is owed, and the sweep retries it until done
--   refunded    given back
CREATE TABLE payments (
    session_id    TEXT PRIMARY KEY,
    order_id      BIGINT NOT NULL REFERENCES orders (id),
    provider      TEXT NOT NULL,
    attempt       INT NOT NULL CHECK (attempt > 0),
    redirect_url  TEXT NOT NULL,
    amount_cents  BIGINT NOT NULL CHECK (amount_cents >= 0),
    currency      TEXT NOT NULL,
    state         TEXT NOT NULL DEFAULT 'open'
        CHECK (state IN ('open', 'paid', 'closed', 'flagged', 'refund_due', 'refunded')),
    -- The provider's reference of the money (Stripe: the payment intent), once taken.
    payment_ref   TEXT,
    -- Why it was flagged (what arrived against what was due).
    mismatch      TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Last asked of the provider (the sweep's lookups go oldest first).
    checked_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (order_id, attempt),
    CONSTRAINT payments_money_has_a_ref
        CHECK (state IN ('open', 'closed') OR payment_ref IS NOT NULL)
);
-- One payable session per order at a time.
CREATE UNIQUE INDEX payments_one_open ON payments (order_id) WHERE state = 'open';
CREATE INDEX payments_open_checked ON payments (checked_at) WHERE state = 'open';
CREATE INDEX payments_refund_due ON payments (updated_at) WHERE state = 'refund_due';

-- Notifications already applied, by the provider's event ID: a replay changes nothing.
CREATE TABLE payment_events (
    provider     TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    session_id   TEXT,
    received_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, event_id)
);
