-- Releases one hold of a reentrant lock; compare-and-delete, so it never frees another owner's.
-- KEYS[1] lock hash   ARGV[1] owner   ARGV[2] lease in ms   ARGV[3] release channel
-- ARGV[4] this request's unique ID
-- Returns {0} freed (and announced), {1, count} still held by this owner, {2} not the owner.
--
-- The same request arriving twice (a re-sent command) releases one hold, not two: the second
-- finds its ID in 'op' and answers the count as it is.
local held = redis.call('HMGET', KEYS[1], 'owner', 'op', 'count')
if held[1] ~= ARGV[1] then return {2} end
if held[2] == ARGV[4] then return {1, tonumber(held[3])} end
local left = redis.call('HINCRBY', KEYS[1], 'count', -1)
if left > 0 then
  redis.call('HSET', KEYS[1], 'op', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, left}
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return {0}
