-- Admits the next entrants of a draw by rank, while units are left (prepended with master.lua,
-- order_id.lua and take.lua; design.md decision 34). The app sends the ranking's slice starting
-- at the cursor it read; a call whose cursor is not the sale's changes nothing (another instance
-- moved it: read again), so a draw resumed after a crash, or run by two instances, admits every
-- rank once.
--
-- KEYS[1] sale hash   KEYS[2] stock   KEYS[3] buyers hash   KEYS[4] queued hash
-- KEYS[5] order stream   KEYS[6] the order-ID day counter of the voucher's shard
-- ARGV[1] the counter's day   ARGV[2] voucher id   ARGV[3] shard   ARGV[4] the cursor the slice
-- starts at   ARGV[5 ..] the user IDs of ranks cursor, cursor + 1, ...
--
-- Reply: {0, cursor, stock, admitted}  the cursor after the entrants taken (each admitted, or
--        passed over when already holding an order), the units left, how many were admitted
--        {11, cursor}  the sale's cursor is another (nothing written)
--        {4} the sale has ended (nothing written)   {6, cursor} the day's order IDs are spent
--        {12} the draw was not opened (draw_open.lua)   {5} not loaded
--        {8, day} the Redis clock is on another day   {9} not reconciled under this master
local now = redis.call('TIME')
local now_sec = tonumber(now[1])
local now_ms = now_sec * 1000 + math.floor(tonumber(now[2]) / 1000)
local today = day_of(now_sec)
if today ~= tonumber(ARGV[1]) then return {8, today} end
local sale = redis.call('HMGET', KEYS[1], 'ends_ms', 'master', 'draw_cursor', 'draw_entrants', 'built')
local stock = redis.call('GET', KEYS[2])
if not sale[1] or not stock then return {5} end
if sale[2] ~= master_id() then return {9} end
if not sale[3] then return {12} end
local cursor, entrants = tonumber(sale[3]), tonumber(sale[4])
if cursor ~= tonumber(ARGV[4]) then return {11, cursor} end
if now_ms >= tonumber(sale[1]) then return {4} end
stock = tonumber(stock)
local k = {stock = KEYS[2], buyers = KEYS[3], queued = KEYS[4], orders = KEYS[5], counter = KEYS[6],
  built = sale[5] or ''}
local voucher, shard = ARGV[2], tonumber(ARGV[3])
local admitted = 0
for i = 5, #ARGV do
  if stock <= 0 or cursor >= entrants then break end
  local user = ARGV[i]
  if redis.call('HEXISTS', KEYS[3], user) == 0 then
    local secs = take_unit(k, voucher, shard, now_sec, user)
    if not secs then
      redis.call('HSET', KEYS[1], 'draw_cursor', cursor)
      return {6, cursor}
    end
    stock = stock - 1
    admitted = admitted + 1
  end
  cursor = cursor + 1
end
redis.call('HSET', KEYS[1], 'draw_cursor', cursor)
return {0, cursor, stock, admitted}
