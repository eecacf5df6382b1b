-- Brings an admin's edit of a sale that has not opened into its Redis state, at once and whole:
-- a buy or an entry runs before or after this script, never between its writes, so it sees the
-- old window and stock or the new ones (prepended with master.lua).
--
-- KEYS[1] sale hash   KEYS[2] stock   KEYS[3] buyers hash   KEYS[4] queued hash
-- KEYS[5] entries set (all in the voucher's slot)
-- ARGV[1] begins_ms   ARGV[2] ends_ms   ARGV[3] units offered (initial + added)
-- ARGV[4] the change in units offered (added to the stock left)   ARGV[5] entries_ms ('' for first come)
--
-- The sale must not have opened by the Redis clock, the one admissions judge by (I6): its start
-- (a draw's entries opening) is still ahead and nobody holds an order or an entry. Otherwise
-- nothing is written and the edit is refused, whatever PostgreSQL's clock said.
-- A revised sale is left unchecked (its `master` removed, master.lua): nothing admits, settles or
-- moves on it until it is reconciled from PostgreSQL, which the edit does once its transaction
-- ended (committed or rolled back). An edit killed before its commit leaves Redis ahead of PostgreSQL, and the first
-- buy, move or preload after it puts the sale back as PostgreSQL has it.
-- Returns {0} revised   {1} no stock in Redis (not loaded or retired): nothing done; a preload
--         reads PostgreSQL   {2} not reconciled under this master: nothing done; the
--         reconciliation reads PostgreSQL   {3} the sale has opened: nothing done
if redis.call('EXISTS', KEYS[2]) == 0 then return {1} end
if not reconciled(KEYS[1]) then return {2} end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local sale = redis.call('HMGET', KEYS[1], 'begins_ms', 'entries_ms')
local opens = tonumber(sale[2] or sale[1])
if (opens and now_ms >= opens) or redis.call('HLEN', KEYS[3]) > 0
    or redis.call('HLEN', KEYS[4]) > 0 or redis.call('SCARD', KEYS[5]) > 0 then
  return {3}
end
redis.call('HSET', KEYS[1], 'begins_ms', ARGV[1], 'ends_ms', ARGV[2], 'initial', ARGV[3])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'entries_ms', ARGV[5])
else
  redis.call('HDEL', KEYS[1], 'entries_ms')
end
redis.call('INCRBY', KEYS[2], ARGV[4])
redis.call('HDEL', KEYS[1], 'master')
return {0}
