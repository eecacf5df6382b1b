-- Decides a batch of entries into one draw sale's draw, in one round trip, in the order given
-- (prepended with master.lua; the app gathers the entries that arrive for a sale while its
-- previous call is in flight, as it does for buys).
--
-- KEYS[1] sale hash (entries_ms, begins_ms, ends_ms, draw_cursor)   KEYS[2] entries set (user IDs)
-- ARGV[1 ..] the shoppers' user IDs
--
-- Reply (decoded in src/infra/scripts/enter.rs):
--   {5}  voucher not loaded   {9} not reconciled under this master (nothing written)
--   {0, entrants, c1, c2, ...} one code per shopper, then the entrants after the batch:
--     0 entered   1 had entered before   2 entries not open yet   3 entries closed (the sale
--     began, or its draw froze the entries)   4 not a draw sale
-- Entries are judged by the Redis clock, like buys; they close for good once the draw opened
-- (draw_open.lua set `draw_cursor`), whatever the clock says, so the ranking is of a fixed set.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local sale = redis.call('HMGET', KEYS[1], 'begins_ms', 'ends_ms', 'master', 'entries_ms',
  'draw_cursor')
if not sale[1] or not sale[2] then return {5} end
if sale[3] ~= master_id() then return {9} end
local begins, ends = tonumber(sale[1]), tonumber(sale[2])
local opens = tonumber(sale[4])
local reply = {0, 0}
for i = 1, #ARGV do
  local code
  if not opens then
    code = 4
  elseif redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 1 then
    code = 1
  elseif now_ms < opens then
    code = 2
  elseif now_ms >= begins or now_ms >= ends or sale[5] then
    code = 3
  else
    redis.call('SADD', KEYS[2], ARGV[i])
    code = 0
  end
  reply[#reply + 1] = code
end
reply[2] = redis.call('SCARD', KEYS[2])
return reply
