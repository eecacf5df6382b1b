-- Decides one purchase atomically, in one round trip (prepended with order_id.lua).
--
-- KEYS[1] sale hash (begins_ms, ends_ms)   KEYS[2] stock   KEYS[3] buyers hash (user -> order)
-- KEYS[4] queued hash (order -> user)      KEYS[5] order stream
-- KEYS[6] this shopper's attempt counter for the current second
-- KEYS[7] the order-ID day counter of the voucher's shard (all seven in the shard's slot)
-- ARGV[1] user id   ARGV[2] the counter's day (days since 1970-01-01, from the app's clock)
-- ARGV[3] voucher id   ARGV[4] attempts allowed per shopper per second   ARGV[5] shard
--
-- Return codes (decoded once, in src/scripts/admit.rs, AdmissionOutcome):
--   {0, seconds, sequence} admitted     {1} sold out
--   {2, seconds, sequence} already bought: this shopper's order on this sale
--   {3} not started    {4} ended    {5} voucher not loaded    {6} order IDs exhausted
--   {7} too many attempts this second
--   {8, day} the Redis clock is on another day than KEYS[7]: name that day's counter, retry
--            (nothing was written)
--
-- Order of checks: loaded, attempts, buyer, window, stock; the stock is decremented only after
-- every check passed, in the same step that records the buyer and enqueues the order. The buyer
-- is checked before the window so that a shopper retrying a buy whose reply was lost learns
-- their order, even once the sale has closed. Every
-- attempt on a loaded sale counts, refused ones included (a shopper hammering a sold-out sale
-- is limited too); the counter expires at the end of the Redis-clock second.
local now = redis.call('TIME')
local now_sec = tonumber(now[1])
local now_ms = now_sec * 1000 + math.floor(tonumber(now[2]) / 1000)
local today = day_of(now_sec)
if today ~= tonumber(ARGV[2]) then return {8, today} end
local shard = tonumber(ARGV[5])

local window = redis.call('HMGET', KEYS[1], 'begins_ms', 'ends_ms')
local stock = redis.call('GET', KEYS[2])
if not window[1] or not window[2] or not stock then return {5} end
local attempts = redis.call('INCR', KEYS[6])
if attempts == 1 then redis.call('PEXPIREAT', KEYS[6], (now_sec + 1) * 1000) end
if attempts > tonumber(ARGV[4]) then return {7} end
local held = redis.call('HGET', KEYS[3], ARGV[1])
if held then
  return {2, tonumber(string.sub(held, 1, 8), 16), tonumber(string.sub(held, 9, 16), 16)}
end
if now_ms < tonumber(window[1]) then return {3} end
if now_ms >= tonumber(window[2]) then return {4} end
if tonumber(stock) <= 0 then return {1} end

local secs, seq = next_order_id(KEYS[7], shard, now_sec)
if not secs then return {6} end
local order = string.format('%08x%08x', secs, seq)
-- A day counter that went back (a failover to a lagging replica, an AOF loss) may hand out an
-- ID still queued on this sale: step past it, as the queued hash holds one shopper per ID. (An
-- ID already written is caught by the worker, which refuses the second order as duplicate_id.)
while redis.call('HEXISTS', KEYS[4], order) == 1 do
  secs, seq = next_order_id(KEYS[7], shard, now_sec)
  if not secs then return {6} end
  order = string.format('%08x%08x', secs, seq)
end

redis.call('DECR', KEYS[2])
redis.call('HSET', KEYS[3], ARGV[1], order)
redis.call('HSET', KEYS[4], order, ARGV[1])
redis.call('XADD', KEYS[5], '*', 'order', order, 'user', ARGV[1], 'voucher', ARGV[3])
return {0, secs, seq}
