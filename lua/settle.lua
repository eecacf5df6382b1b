-- Settles orders the worker has decided (after its PostgreSQL commit): acknowledges and deletes
-- their stream entries and, for rejected ones, gives back what the admission took.
--
-- KEYS[1] order stream   KEYS[2] stock   KEYS[3] buyers hash (user -> order)   KEYS[4] queued hash
-- KEYS[5] dead-letter stream   KEYS[6] sale hash
-- ARGV[1] consumer group, then groups of six:
--   entry id, order (16-hex), user id, flags, reason, the entry's `built` (take.lua)
-- flags (sum): 1 release the buyer, 2 return the unit to stock, 4 copy to the dead letters;
-- 0 is an order PostgreSQL holds (written).
--
-- Idempotent: an order gives back (and is dead-lettered) only while it is still in the queued hash (HDEL returns 1),
-- so a settle that runs twice (crash before the reply) never returns stock twice.
--
-- A written order that is not queued was settled before, or was admitted before the sale was
-- rebuilt (its `built` is not the sale's) and written after the rebuild read PostgreSQL: that
-- rebuild counted neither its unit nor its buyer. Which of the two cannot be told here, so the
-- sale is marked unchecked (its `master` removed) and the app reconciles it from PostgreSQL, which
-- holds the order now (preload.lua); until then nothing admits on it. With no sale hash at
-- all (Redis lost the sale, and a restore may be reading PostgreSQL's snapshot right now), a
-- written order that is not queued is not settled: the caller restores the sale first, from a
-- PostgreSQL that holds the order, then settles (the new rebuild's name then marks it again).
--
-- Returns {0, n}: n orders settled; {1, n}: settled, and the sale was marked to be reconciled;
-- {2}: nothing done, as the sale (still in Redis) was not reconciled under this master
-- (master.lua): a reconciliation counts the queued orders against PostgreSQL's and must find
-- every order PostgreSQL does not hold still queued; {3}: nothing done, as the sale is not in
-- Redis and a written order of the batch is not queued.
local sale_exists = redis.call('EXISTS', KEYS[6]) == 1
if sale_exists and not reconciled(KEYS[6]) then return {2} end
if not sale_exists then
  for i = 2, #ARGV, 6 do
    if tonumber(ARGV[i + 3]) == 0 and redis.call('HEXISTS', KEYS[4], ARGV[i + 1]) == 0 then
      return {3}
    end
  end
end
local built = sale_exists and (redis.call('HGET', KEYS[6], 'built') or '')
local stale = false
local settled = 0
local entries = {}
for i = 2, #ARGV, 6 do
  local entry, order, user, flags, reason = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3]), ARGV[i + 4]
  local was_queued = redis.call('HDEL', KEYS[4], order)
  if was_queued == 0 then
    if flags == 0 and built and ARGV[i + 5] ~= built then stale = true end
  else
    -- The buyer is released only from this order (a shopper holds one order per sale).
    if flags % 2 == 1 and redis.call('HGET', KEYS[3], user) == order then
      redis.call('HDEL', KEYS[3], user)
    end
    if math.floor(flags / 2) % 2 == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
      redis.call('INCR', KEYS[2])
    end
    if math.floor(flags / 4) % 2 == 1 then
      redis.call('XADD', KEYS[5], '*', 'order', order, 'user', user, 'reason', reason, 'entry', entry)
    end
  end
  entries[#entries + 1] = entry
  settled = settled + 1
end
-- Acknowledged and deleted a few hundred at a time: Redis 7.0's XDEL finds the stream's new
-- first entry on each call, so one entry per call cost 14 µs and a call of 100 entries 350 µs
-- (BENCHMARKS.md, "Settling in fewer calls").
for from = 1, #entries, 500 do
  local to = math.min(from + 499, #entries)
  redis.call('XACK', KEYS[1], ARGV[1], unpack(entries, from, to))
  redis.call('XDEL', KEYS[1], unpack(entries, from, to))
end
if stale then
  redis.call('HDEL', KEYS[6], 'master')
  return {1, settled}
end
return {0, settled}
