-- Money never kept by mistake (issue #41, design.md decision 41).

-- A refund Stripe refused for good (the charge already refunded elsewhere, disputed): the
-- payment waits for an admin and blocks no other refund.
ALTER TABLE payments DROP CONSTRAINT payments_state_check;
ALTER TABLE payments ADD CONSTRAINT payments_state_known
    CHECK (state IN ('open', 'paid', 'closed', 'flagged', 'refund_due', 'refund_failed', 'refunded'));

-- When the provider itself lets the session lapse (Stripe: `expires_at`, 30 minutes after
-- creation for the shop's sessions; 24 hours for those opened before this column).
ALTER TABLE payments ADD COLUMN expires_at TIMESTAMPTZ;
UPDATE payments SET expires_at = created_at + interval '24 hours';
ALTER TABLE payments ALTER COLUMN expires_at SET NOT NULL;

-- Closed by the shop without the provider's word (Stripe unreachable past the deadline's
-- grace): money may still arrive, so it is looked up until the provider says it is over or
-- `expires_at` has passed.
ALTER TABLE payments ADD COLUMN watched BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX payments_watched ON payments (checked_at) WHERE watched;

-- Refunds are retried per payment, with backoff: one that fails waits its turn, never the others.
ALTER TABLE payments ADD COLUMN refund_tries INT NOT NULL DEFAULT 0;
-- Answers that may have been saved against the refund's idempotency key as a failure (a 5xx,
-- no answer): each moves the key on, so a saved failure is never replayed for ever.
ALTER TABLE payments ADD COLUMN refund_key_gen INT NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN refund_next_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE payments ADD COLUMN refund_error TEXT;
DROP INDEX payments_refund_due;
CREATE INDEX payments_refund_due ON payments (refund_next_at) WHERE state = 'refund_due';

-- Pay now's attempt number, the last part of the Checkout Session's idempotency key. It moves
-- on after every session recorded and after every create that failed (a 5xx Stripe may have
-- saved against the key, no answer, an `idempotency_error`), so no failure is replayed to the
-- next Pay now; a `409` (the same key still in flight) leaves it.
ALTER TABLE orders ADD COLUMN checkout_attempt INT NOT NULL DEFAULT 1 CHECK (checkout_attempt > 0);
UPDATE orders o SET checkout_attempt = p.next
    FROM (SELECT order_id, max(attempt) + 1 AS next FROM payments GROUP BY order_id) p
    WHERE p.order_id = o.id;
