-- Draws one global order ID from the Redis clock (prepended with order_id.lua).
-- ARGV[1] day-counter key prefix.
-- Returns {0, seconds, sequence} or {1} when the day's sequence is exhausted.
local now = redis.call('TIME')
local secs, seq = next_order_id(ARGV[1], tonumber(now[1]))
if not secs then return {1} end
return {0, secs, seq}
