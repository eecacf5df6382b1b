-- Users sign in by phone; admins are configured by phone (SECKILL_ADMIN_PHONES), not stored.
CREATE TABLE users (
    id          BIGSERIAL PRIMARY KEY,
    phone       TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A voucher's sale. `stock` is what PostgreSQL has not sold: it only goes down through the
-- worker's conditional decrement, so orders written can never exceed `initial_stock` (I1).
CREATE TABLE vouchers (
    id             BIGSERIAL PRIMARY KEY,
    title          TEXT NOT NULL CHECK (char_length(title) BETWEEN 1 AND 100),
    description    TEXT NOT NULL DEFAULT '' CHECK (char_length(description) <= 2000),
    price_cents    BIGINT NOT NULL CHECK (price_cents >= 0),
    initial_stock  BIGINT NOT NULL CHECK (initial_stock > 0),
    stock          BIGINT NOT NULL CHECK (stock >= 0 AND stock <= initial_stock),
    begins_at      TIMESTAMPTZ NOT NULL,
    ends_at        TIMESTAMPTZ NOT NULL CHECK (ends_at > begins_at),
    created_by     BIGINT REFERENCES users (id),
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Fencing token of the last preload into Redis (see src/lock): a preload holding an older
    -- token is refused.
    preload_fence  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX vouchers_ends_at ON vouchers (ends_at);

-- Written orders. The ID is the global order ID the shopper was given at admission; inserts are
-- idempotent by it (I4). One live order per shopper and voucher (I2).
CREATE TABLE orders (
    id          BIGINT PRIMARY KEY CHECK (id > 0),
    voucher_id  BIGINT NOT NULL REFERENCES vouchers (id),
    user_id     BIGINT NOT NULL REFERENCES users (id),
    admitted_at TIMESTAMPTZ NOT NULL,
    written_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT orders_one_per_shopper UNIQUE (voucher_id, user_id)
);
CREATE INDEX orders_user ON orders (user_id, id DESC);
CREATE INDEX orders_voucher_written ON orders (voucher_id, written_at);

-- Orders the worker rejected, with the reason. No foreign keys: a poisoned entry that violates
-- them must still be recordable, so that its shopper sees `failed` (I3).
CREATE TABLE order_failures (
    id          BIGINT PRIMARY KEY,
    voucher_id  BIGINT NOT NULL,
    user_id     BIGINT NOT NULL,
    reason      TEXT NOT NULL,
    failed_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX order_failures_voucher ON order_failures (voucher_id);
