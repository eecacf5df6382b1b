-- Acquires (or re-enters) a reentrant lock.
-- KEYS[1] lock hash (owner, count, fence)   KEYS[2] fencing counter (never expires)
-- ARGV[1] owner   ARGV[2] lease in ms
-- Returns {0, fence} granted (a re-entry keeps its fence), {1, pttl} held by someone else.
--
-- The fence is the counter plus one, floored at the Redis clock in microseconds: it strictly
-- increases per name, and keeps increasing even after Redis lost the counter (a flush or a
-- restart without persistence), so stores that remember the last token never see it go back.
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {0, tonumber(redis.call('HGET', KEYS[1], 'fence'))}
end
if owner then return {1, redis.call('PTTL', KEYS[1])} end
local now = redis.call('TIME')
local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
local fence = redis.call('INCR', KEYS[2])
if fence < floor then
  fence = floor
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'count', 1, 'fence', string.format('%d', fence))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {0, fence}
