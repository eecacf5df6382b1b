-- Acquires (or re-enters) a reentrant lock.
-- KEYS[1] lock hash (owner, count, fence, op)   KEYS[2] fencing counter (never expires)
-- ARGV[1] owner   ARGV[2] lease in ms   ARGV[3] this request's unique ID
-- Returns {0, fence} granted (a re-entry keeps its fence), {1, pttl} held by someone else.
--
-- A request may arrive twice (a cluster client re-sends a command whose connection dropped):
-- the hash remembers the ID of the last request applied ('op'), and the same ID again answers
-- the grant without counting a second hold.
--
-- The fence is the counter plus one, floored at the Redis clock in microseconds: it strictly
-- increases per name, and keeps increasing even after Redis lost the counter (a flush or a
-- restart without persistence), so stores that remember the last token never see it go back.
local held = redis.call('HMGET', KEYS[1], 'owner', 'op', 'fence')
if held[1] == ARGV[1] then
  if held[2] ~= ARGV[3] then
    redis.call('HINCRBY', KEYS[1], 'count', 1)
    redis.call('HSET', KEYS[1], 'op', ARGV[3])
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {0, tonumber(held[3])}
end
if held[1] then return {1, redis.call('PTTL', KEYS[1])} end
local now = redis.call('TIME')
local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
local fence = redis.call('INCR', KEYS[2])
if fence < floor then
  fence = floor
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'count', 1, 'fence', string.format('%d', fence),
  'op', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {0, fence}
