-- Checks a sign-in code; the code is single-use and allows a bounded number of attempts, and
-- the phone a bounded number of wrong codes per window across all its codes.
-- KEYS[1] code hash (code, attempts)   KEYS[2] the phone's wrong-code counter (same slot)
-- ARGV[1] submitted code   ARGV[2] attempts per code   ARGV[3] wrong codes per window
-- ARGV[4] window (ms)
-- Returns {reply, ms}: 0 accepted (the code is consumed); 1 wrong code (counted); 2 no code
-- (expired, never sent, or out of attempts: the code is then deleted); 3 the phone is out of
-- wrong codes for ms more milliseconds (the code is not even compared).
local failures = tonumber(redis.call('GET', KEYS[2]) or '0')
if failures >= tonumber(ARGV[3]) then
  return {3, redis.call('PTTL', KEYS[2])}
end
local code = redis.call('HGET', KEYS[1], 'code')
if not code then return {2, 0} end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts > tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return {2, 0}
end
if code ~= ARGV[1] then
  if redis.call('INCR', KEYS[2]) == 1 then
    redis.call('PEXPIRE', KEYS[2], ARGV[4])
  end
  return {1, 0}
end
redis.call('DEL', KEYS[1])
return {0, 0}
