-- Receipts that bind the rules (issue #51, decision 49): the key a draw sale's receipts are
-- signed with is fixed at its creation and named in its transcript, so rotating
-- SECKILL_DRAW_SIGNING_KEY breaks no receipt of an older sale. Draws created before this column
-- get the key the server starts with (`Core::migrate`): the one that signed them until now.
ALTER TABLE draws ADD COLUMN receipt_key BYTEA CHECK (length(receipt_key) = 32);
