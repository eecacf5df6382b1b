-- Checks a sign-in code; the code is single-use and allows a bounded number of attempts.
-- KEYS[1] code hash (code, attempts)   ARGV[1] submitted code   ARGV[2] max attempts
-- Returns 0 accepted (the code is consumed), 1 wrong code, 2 no code (expired, never sent, or
-- too many attempts; the code is then deleted).
local code = redis.call('HGET', KEYS[1], 'code')
if not code then return 2 end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts > tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 2
end
if code ~= ARGV[1] then return 1 end
redis.call('DEL', KEYS[1])
return 0
