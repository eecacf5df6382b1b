-- Library prepended to the scripts that draw order IDs (see src/scripts/mod.rs); it returns
-- nothing by itself.
--
-- A global order ID is sign 0 | 31 bits of seconds since 2022-01-01T00:00:00Z | a 32-bit
-- sequence made of the shard (8 bits) and that shard's count for the UTC day (24 bits, INCR on
-- the shard's day counter). The counter is a key the caller declares (in the voucher's slot on a
-- Redis Cluster), named from the app's clock; the script reads the Redis clock once and refuses
-- a counter of another day (the caller names the day it answers and retries once), so the
-- counter's day and the ID's seconds never disagree, whatever the app hosts' clocks say. Lua
-- numbers are doubles, so the 64-bit ID is returned as its two fields and composed in Rust;
-- Redis-side copies use the 16-hex-digit form '%08x%08x'.

local ORDER_EPOCH = 1640995200
local SHARD_SEQ_MAX = 16777215
local SHARD_SPAN = 16777216
local COUNTER_TTL = 172800

-- The UTC day number (days since 1970-01-01) of Unix second now_sec.
local function day_of(now_sec)
  return math.floor(now_sec / 86400)
end

-- Draws the next ID of `shard` from the day counter `key` at Unix second now_sec. Returns
-- seconds-since-epoch and the sequence field, or nil when the shard's 2^24 numbers of the day
-- are spent (never wraps).
local function next_order_id(key, shard, now_sec)
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('EXPIRE', key, COUNTER_TTL) end
  if n > SHARD_SEQ_MAX then return nil end
  return now_sec - ORDER_EPOCH, shard * SHARD_SPAN + n
end
