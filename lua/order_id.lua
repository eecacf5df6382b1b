-- Library prepended to the scripts that draw order IDs (see src/scripts.rs); it returns nothing
-- by itself.
--
-- A global order ID is sign 0 | 31 bits of seconds since 2022-01-01T00:00:00Z | 32 bits of the
-- UTC day's sequence (INCR on <prefix>YYYY:MM:DD). Seconds and day both come from one reading of
-- the Redis server clock, so the counter's day and the ID's seconds never disagree, whatever the
-- app hosts' clocks say. Lua numbers are doubles, so the 64-bit ID is returned as its two
-- fields and composed in Rust; Redis-side copies use the 16-hex-digit form '%08x%08x'.

local ORDER_EPOCH = 1640995200
local SEQ_MAX = 4294967295
local COUNTER_TTL = 172800

-- Proleptic Gregorian date of a day number since 1970-01-01 (H. Hinnant's civil_from_days).
local function civil_from_days(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

-- Draws the next ID at Unix second now_sec. Returns seconds-since-epoch and sequence, or nil
-- when the day's 2^32 sequence numbers are spent (never wraps).
local function next_order_id(counter_prefix, now_sec)
  local y, m, d = civil_from_days(math.floor(now_sec / 86400))
  local key = string.format('%s%04d:%02d:%02d', counter_prefix, y, m, d)
  local seq = redis.call('INCR', key)
  if seq == 1 then redis.call('EXPIRE', key, COUNTER_TTL) end
  if seq > SEQ_MAX then return nil end
  return now_sec - ORDER_EPOCH, seq
end
