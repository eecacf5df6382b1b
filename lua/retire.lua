-- Retires a finished sale's Redis state once nothing is left to write. Atomic, so no admission
-- or settlement can slip between the checks and the deletes.
--
-- KEYS[1] sale hash   KEYS[2] stock   KEYS[3] buyers hash   KEYS[4] queued hash
-- KEYS[5] order stream   KEYS[6] applied stock moves   KEYS[7] a draw's entries
-- (one hash slot; the caller removes the voucher from the registry after)
-- ARGV[1] grace in ms after the sale's end
-- Returns {0} retired, {1, ms} not yet (ends + grace is ms away), {2, n} n orders still queued
-- or on the stream (also when the sale's hash is gone: the worker still has them to write),
-- {3} no sale state.
local left = redis.call('HLEN', KEYS[4]) + redis.call('XLEN', KEYS[5])
local ends = redis.call('HGET', KEYS[1], 'ends_ms')
if not ends then
  if left > 0 then return {2, left} end
  return {3}
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = tonumber(ends) + tonumber(ARGV[1])
if now_ms < due then return {1, due - now_ms} end
if left > 0 then return {2, left} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
return {0}
