-- Draws one global order ID from the Redis clock (prepended with order_id.lua).
-- KEYS[1] the shard's day counter   ARGV[1] the counter's day (days since 1970-01-01)
-- ARGV[2] the shard (0..255)
-- Returns {0, seconds, sequence}, {1} when the shard's day is exhausted, or {2, day} when the
-- Redis clock is on another day than the counter named (name that day's counter and retry).
local now = tonumber(redis.call('TIME')[1])
local today = day_of(now)
if today ~= tonumber(ARGV[1]) then return {2, today} end
local secs, seq = next_order_id(KEYS[1], tonumber(ARGV[2]), now)
if not secs then return {1} end
return {0, secs, seq}
