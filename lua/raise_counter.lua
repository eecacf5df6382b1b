-- Raises a day's order-ID counter to at least ARGV[1] (never lowers it), keeping the counter's
-- expiry. Run when a sale is restored from PostgreSQL after Redis lost state: the counter may
-- have gone back with it, and IDs up to the highest one PostgreSQL holds for the day are taken.
--
-- KEYS[1] the day's counter   ARGV[1] the highest sequence in use   ARGV[2] expiry in seconds
-- Returns the counter's value afterwards.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current >= floor then return current end
redis.call('SET', KEYS[1], floor, 'EX', ARGV[2])
return floor
