-- Opens a draw sale's draw (prepended with master.lua): once the Redis clock reaches the sale's
-- start, freezes the entries (sets `draw_cursor` 0, `draw_entrants` to the count of the entry
-- log the app closed in PostgreSQL, and `draw_stock` to the units at the draw; enter.lua refuses
-- every entry from then on). Idempotent: a draw opened before answers its state.
--
-- KEYS[1] sale hash   KEYS[2] stock
-- ARGV[1] the entrants of the closed log, or '' to ask only (nothing written)
-- Reply: {0, cursor, entrants}   {3, ms} the sale begins in ms (nothing written)
--        {13} due: the start is reached, the draw not opened (asked only)
--        {4} not a draw sale   {5} not loaded   {9} not reconciled under this master
local sale = redis.call('HMGET', KEYS[1], 'begins_ms', 'master', 'entries_ms', 'draw_cursor',
  'draw_entrants')
if not sale[1] then return {5} end
if sale[2] ~= master_id() then return {9} end
if not sale[3] then return {4} end
if sale[4] then return {0, tonumber(sale[4]), tonumber(sale[5])} end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local begins = tonumber(sale[1])
if now_ms < begins then return {3, begins - now_ms} end
if ARGV[1] == '' then return {13} end
local stock = redis.call('GET', KEYS[2]) or 0
redis.call('HSET', KEYS[1], 'draw_cursor', 0, 'draw_entrants', ARGV[1], 'draw_stock', stock)
return {0, 0, tonumber(ARGV[1])}
