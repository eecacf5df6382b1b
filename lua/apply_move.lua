-- Applies one stock move from PostgreSQL's outbox (`stock_moves`) to a sale's Redis state: a
-- cancelled order's unit coming back, or units an admin added. Idempotent by the move's key: a
-- move applied before (a retry after a crash, the sweep and the request both trying) does
-- nothing.
--
-- KEYS[1] stock   KEYS[2] buyers hash (user -> order)   KEYS[3] applied moves (hash: key -> 1)
-- KEYS[4] sale hash (all four in the voucher's slot; prepended with master.lua)
-- ARGV[1] move key   ARGV[2] units   ARGV[3] user ('' for a top-up)   ARGV[4] order (16-hex, '')
--
-- A return also releases its shopper's buyer slot, if it still holds that order, so the
-- shopper may buy again.
-- Returns {0, stock} applied   {1, stock} applied before: nothing done
--         {2} the sale has no stock in Redis (not loaded or retired): nothing done; a restore
--             rebuilds the stock from PostgreSQL, which already counts the move
--         {3} the sale was not reconciled under this master (master.lua): nothing done; the
--             move stays pending until the reconciliation
if redis.call('EXISTS', KEYS[1]) == 0 then return {2} end
if not reconciled(KEYS[4]) then return {3} end
if redis.call('HSETNX', KEYS[3], ARGV[1], 1) == 0 then
  return {1, tonumber(redis.call('GET', KEYS[1]))}
end
local stock = redis.call('INCRBY', KEYS[1], ARGV[2])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[4] then
  redis.call('HDEL', KEYS[2], ARGV[3])
end
return {0, stock}
