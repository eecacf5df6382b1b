-- Acquires (or re-enters) a reentrant lock.
-- KEYS[1] lock hash (owner, count, fence)   KEYS[2] fencing counter (never expires)
-- ARGV[1] owner   ARGV[2] lease in ms
-- Returns {0, fence} granted (a re-entry keeps its fence), {1, pttl} held by someone else.
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {0, tonumber(redis.call('HGET', KEYS[1], 'fence'))}
end
if owner then return {1, redis.call('PTTL', KEYS[1])} end
local fence = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'count', 1, 'fence', fence)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {0, fence}
