-- A witness outside the shop for the draw's commitment (issue #51, decision 49): at the close,
-- an RFC 3161 timestamping authority's token over
-- SHA-256("seckill-draw-witness-v1:{voucher}:{entries_root hex}:{round or -}"), its URL and the
-- time it states. Written once; a draw without one (no authority configured, or it could not be
-- reached before the draw) publishes none.
ALTER TABLE draws
    ADD COLUMN witness_tsa TEXT,
    ADD COLUMN witness_token BYTEA,
    ADD COLUMN witnessed_at TIMESTAMPTZ,
    ADD CONSTRAINT draws_witness_whole
        CHECK ((witness_token IS NULL) = (witness_tsa IS NULL)
               AND (witness_token IS NULL) = (witnessed_at IS NULL)),
    ADD CONSTRAINT draws_witness_after_close
        CHECK (witness_token IS NULL OR closed_at IS NOT NULL);
