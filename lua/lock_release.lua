-- Releases one hold of a reentrant lock; compare-and-delete, so it never frees another owner's.
-- KEYS[1] lock hash   ARGV[1] owner   ARGV[2] lease in ms   ARGV[3] release channel
-- Returns {0} freed (and announced), {1, count} still held by this owner, {2} not the owner.
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return {2} end
local left = redis.call('HINCRBY', KEYS[1], 'count', -1)
if left > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, left}
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return {0}
