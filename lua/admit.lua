-- Decides a batch of purchases of one voucher atomically, in one round trip, in the order given
-- (prepended with master.lua, order_id.lua and take.lua). A batch of one is a single purchase; the app gathers the buys
-- that arrive for a voucher while its previous call is in flight (src/sale/lanes.rs).
--
-- KEYS[1] sale hash (begins_ms, ends_ms)   KEYS[2] stock   KEYS[3] buyers hash (user -> order)
-- KEYS[4] queued hash (order -> user)      KEYS[5] order stream
-- KEYS[6] the order-ID day counter of the voucher's shard
-- KEYS[6 + i] shopper i's attempt counter for the current second (all keys in the shard's slot)
-- ARGV[1] the counter's day (days since 1970-01-01, from the app's clock)   ARGV[2] voucher id
-- ARGV[3] attempts allowed per shopper per second   ARGV[4] shard
-- ARGV[4 + i] shopper i's user id
--
-- Reply (decoded once, in src/scripts/admit.rs):
--   {8, day}  the Redis clock is on another day than KEYS[6]: name that day's counter, retry
--             (nothing was written)
--   {5}       voucher not loaded (nothing was written)
--   {9}       the sale was not reconciled since this master's ID changed (master.lua): nothing
--             was written; reconcile, then retry
--   {0, c1, a1, b1, c2, a2, b2, ...}  one triple per shopper, in order:
--     {0, seconds, sequence} admitted     {1, 0, 0} sold out
--     {2, seconds, sequence} already bought: this shopper's order on this sale
--     {3, 0, 0} not started    {4, 0, 0} ended    {6, 0, 0} order IDs exhausted
--     {7, 0, 0} too many attempts this second
--     {10, 0, 0} a draw sale whose draw has not run, or is giving its units out by rank
--
-- A draw sale (field `entries_ms`, design.md decision 34) sells nothing before its draw
-- (`draw_cursor` absent) nor while units remain for the entrants not yet reached
-- (`draw_cursor` < `draw_entrants`, see draw_admit.lua): a unit that comes back then goes down
-- the ranking, not to the fastest buyer; once every entrant was reached it sells first come.
--
-- Each shopper's checks, in order: attempts, buyer, window, draw, stock; a unit is taken only after
-- every check passed, in the same step that records the buyer and enqueues the order, so the
-- batch decides exactly what the same purchases made one by one would (a shopper twice in one
-- batch is admitted once, then learns that order). The buyer is checked before the window so
-- that a shopper retrying a buy whose reply was lost learns their order, even once the sale has
-- closed. The stock is decremented before the buyer is recorded, shopper by shopper, so a script
-- stopped half-way (an error on a write) never leaves a buyer whose unit was not taken. Every
-- attempt on a loaded sale counts, refused ones included (a shopper hammering a sold-out sale is
-- limited too); the counter expires at the end of the Redis-clock second.
local now = redis.call('TIME')
local now_sec = tonumber(now[1])
local now_ms = now_sec * 1000 + math.floor(tonumber(now[2]) / 1000)
local today = day_of(now_sec)
if today ~= tonumber(ARGV[1]) then return {8, today} end

local window = redis.call('HMGET', KEYS[1], 'begins_ms', 'ends_ms', 'master', 'entries_ms',
  'draw_cursor', 'draw_entrants', 'built')
local stock = redis.call('GET', KEYS[2])
if not window[1] or not window[2] or not stock then return {5} end
if window[3] ~= master_id() then return {9} end
stock = tonumber(stock)
local begins, ends = tonumber(window[1]), tonumber(window[2])
local voucher, limit, shard = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local is_draw, cursor, entrants = window[4], tonumber(window[5]), tonumber(window[6])
local reply = {0}
local k = {stock = KEYS[2], buyers = KEYS[3], queued = KEYS[4], orders = KEYS[5], counter = KEYS[6],
  built = window[7] or ''}

local function decide(rate_key, user)
  local attempts = redis.call('INCR', rate_key)
  if attempts == 1 then redis.call('PEXPIREAT', rate_key, (now_sec + 1) * 1000) end
  if attempts > limit then return 7 end
  local held = redis.call('HGET', KEYS[3], user)
  if held then
    return 2, tonumber(string.sub(held, 1, 8), 16), tonumber(string.sub(held, 9, 16), 16)
  end
  if now_ms >= ends then return 4 end
  if is_draw then
    if not cursor then return 10 end
    if cursor < entrants then
      if stock > 0 then return 10 end
      return 1
    end
  end
  if now_ms < begins then return 3 end
  if stock <= 0 then return 1 end

  local secs, seq = take_unit(k, voucher, shard, now_sec, user)
  if not secs then return 6 end
  stock = stock - 1
  return 0, secs, seq
end

for i = 5, #ARGV do
  local code, a, b = decide(KEYS[i + 2], ARGV[i])
  reply[#reply + 1] = code
  reply[#reply + 1] = a or 0
  reply[#reply + 1] = b or 0
end
return reply
