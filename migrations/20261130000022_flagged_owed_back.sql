-- Money that did not match its order (`flagged`) is held only while the order can still be
-- paid (design.md M1, decision 33 amended): once the order is paid another way or cancelled it
-- is owed back. Before this, a mismatch on an order that was paid (by a second, right payment,
-- or before the mismatch arrived) stayed flagged for good. Those rows are owed back now; the
-- sweep refunds them (one an admin refunded by hand is answered `charge_already_refunded`,
-- which counts as made).
UPDATE payments p
   SET state = 'refund_due', refund_next_at = now(), updated_at = now()
  FROM orders o
 WHERE o.id = p.order_id AND p.state = 'flagged' AND o.status <> 'created';
