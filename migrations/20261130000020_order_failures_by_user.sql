-- "My orders" reads a shopper's failed orders beside their written ones
-- (src/infra/store/orders/mod.rs, list_for_user): by user, newest first, as orders_user does
-- for `orders`. Without it each visit read the whole table, which grows with every sale's
-- rejected and dead-lettered orders.
CREATE INDEX order_failures_user ON order_failures (user_id, id DESC);
