-- What Stripe says of money after it was taken (issue #41): a dispute opened on a payment,
-- then won or lost. A column, not a state: a disputed payment is still whatever it was (the
-- payment of a paid order, refunded, …); the admins see it until it is won.
ALTER TABLE payments ADD COLUMN dispute TEXT CHECK (dispute IN ('open', 'won', 'lost'));
-- Refund and dispute events name the money (the payment intent), not the session.
CREATE INDEX payments_payment_ref ON payments (payment_ref) WHERE payment_ref IS NOT NULL;

-- An admin refunds a paid order (`POST /api/admin/orders/{id}/refund`): it is cancelled by the
-- shop, its unit goes back on sale as a cancellation's does, and its money is owed back.
ALTER TABLE orders DROP CONSTRAINT orders_cancelled_by_check;
ALTER TABLE orders ADD CONSTRAINT orders_cancelled_by_known
    CHECK (cancelled_by IN ('shopper', 'deadline', 'shop'));
