-- The books out (issue #55): orders by when they were admitted and payments by when they were
-- opened, read a batch at a time in that order for an export of a period (keyset, no OFFSET).
CREATE INDEX orders_admitted ON orders (admitted_at, id);
CREATE INDEX payments_created ON payments (created_at, session_id);
