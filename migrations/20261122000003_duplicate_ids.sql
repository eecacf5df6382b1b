-- A failure is the failure of one shopper's order. After a counter regression (a failover to a
-- lagging replica, an AOF `everysec` loss) two shoppers can hold the same order ID; the second
-- one's failure (`duplicate_id`) must be recordable beside the first one's row, so the key of a
-- failure is the ID and the shopper.
ALTER TABLE order_failures DROP CONSTRAINT order_failures_pkey;
ALTER TABLE order_failures ADD PRIMARY KEY (id, user_id);
