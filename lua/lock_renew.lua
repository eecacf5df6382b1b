-- Extends the lease if the caller still owns the lock (the watchdog's heartbeat).
-- KEYS[1] lock hash   ARGV[1] owner   ARGV[2] lease in ms
-- Returns 1 renewed, 0 lost (expired, or taken by someone else).
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
