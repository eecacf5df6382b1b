-- Ends a sale now: its window's end becomes the earliest of the current end, PostgreSQL's new
-- end and the Redis clock's now, so admissions (judged by this clock, I6) stop at once. A sale
-- that had not begun gets a start just before that end. Idempotent.
--
-- KEYS[1] sale hash   ARGV[1] the end PostgreSQL recorded (ms since the epoch)
-- Returns {0, ends_ms} ended   {1} no sale state in Redis (nothing to stop)
local ends = redis.call('HGET', KEYS[1], 'ends_ms')
if not ends then return {1} end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local new_end = math.min(tonumber(ends), tonumber(ARGV[1]), now_ms)
redis.call('HSET', KEYS[1], 'ends_ms', new_end)
local begins = tonumber(redis.call('HGET', KEYS[1], 'begins_ms'))
if begins and begins >= new_end then redis.call('HSET', KEYS[1], 'begins_ms', new_end - 1) end
return {0, new_end}
