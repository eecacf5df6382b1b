-- After the rush (issue #15): an order waits for payment until its deadline, then is paid or
-- cancelled; a cancelled order's unit goes back on sale; admins end a sale early or add stock.

-- `created` awaits payment until `pay_by`; `paid` and `cancelled` are final. Each transition is
-- a conditional UPDATE on the current status (src/store/orders/lifecycle.rs).
ALTER TABLE orders
    ADD COLUMN status TEXT NOT NULL DEFAULT 'created'
        CHECK (status IN ('created', 'paid', 'cancelled')),
    ADD COLUMN pay_by TIMESTAMPTZ,
    ADD COLUMN paid_at TIMESTAMPTZ,
    -- The Idempotency-Key of the payment that paid it (the same key answers the same again),
    -- and the provider's reference.
    ADD COLUMN payment_key TEXT,
    ADD COLUMN payment_ref TEXT,
    ADD COLUMN cancelled_at TIMESTAMPTZ,
    ADD COLUMN cancelled_by TEXT CHECK (cancelled_by IN ('shopper', 'deadline')),
    ADD CONSTRAINT orders_paid_has_its_key CHECK (status <> 'paid' OR payment_key IS NOT NULL),
    ADD CONSTRAINT orders_cancelled_says_by_whom
        CHECK (status <> 'cancelled' OR cancelled_by IS NOT NULL);
UPDATE orders SET pay_by = written_at + interval '15 minutes' WHERE pay_by IS NULL;
ALTER TABLE orders ALTER COLUMN pay_by SET NOT NULL;

-- I2 holds for live orders: a shopper whose order was cancelled may buy again.
ALTER TABLE orders DROP CONSTRAINT orders_one_per_shopper;
CREATE UNIQUE INDEX orders_one_live_per_shopper ON orders (voucher_id, user_id)
    WHERE status <> 'cancelled';
CREATE INDEX orders_due ON orders (pay_by) WHERE status = 'created';

-- Stock an admin added after creating the sale. PostgreSQL's unsold stock can now reach
-- initial + added.
ALTER TABLE vouchers ADD COLUMN added_stock BIGINT NOT NULL DEFAULT 0 CHECK (added_stock >= 0);
ALTER TABLE vouchers DROP CONSTRAINT vouchers_check;
ALTER TABLE vouchers ADD CONSTRAINT vouchers_stock_within
    CHECK (stock >= 0 AND stock <= initial_stock + added_stock);

-- The outbox of units going back to Redis: a cancelled order's unit ('return:<order>') or an
-- admin's top-up ('add:<idempotency key>'), written in the same transaction as PostgreSQL's own
-- stock change, applied to Redis by lua/apply_move.lua (idempotent by `key`), then marked
-- applied. A crash between the two stores leaves the row pending; the sweep applies it.
CREATE TABLE stock_moves (
    key         TEXT PRIMARY KEY,
    voucher_id  BIGINT NOT NULL REFERENCES vouchers (id),
    units       BIGINT NOT NULL CHECK (units > 0),
    -- For a return: the shopper whose buyer slot is released with it, and the order.
    user_id     BIGINT,
    order_id    BIGINT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_at  TIMESTAMPTZ
);
CREATE INDEX stock_moves_pending ON stock_moves (created_at) WHERE applied_at IS NULL;
CREATE INDEX stock_moves_voucher ON stock_moves (voucher_id);
