-- Loads a voucher's sale into Redis, or restores it after Redis lost it. Idempotent.
--
-- KEYS[1] sale hash   KEYS[2] stock   KEYS[3] buyers hash (user -> order)   KEYS[4] queued hash
-- KEYS[5] applied stock moves (hash: move key -> 1, see apply_move.lua)
-- ARGV[1] begins_ms   ARGV[2] ends_ms   ARGV[3] stock offered (initial + added)
-- ARGV[4] units PostgreSQL has not sold (vouchers.stock)
-- ARGV[5] m, then ARGV[6 .. 5+m] the keys of every stock move PostgreSQL holds for the sale
-- then pairs: user, order (16-hex) of each live written order
-- (ARGV[4], the moves and the pairs are one PostgreSQL snapshot.)
--
-- The window is always (re)written. The stock is written only when absent: a present stock is
-- live state that admissions and the worker own. When absent, it is PostgreSQL's remainder
-- minus the orders still queued here, so it can never exceed what PostgreSQL will accept; the
-- buyers are those of written and of queued orders, and every stock move is marked applied: the
-- rebuilt stock already counts them (PostgreSQL changed its stock in the move's transaction).
-- Returns {1, stock} when the stock was (re)built, {0, stock} when it was already there.
redis.call('HSET', KEYS[1], 'begins_ms', ARGV[1], 'ends_ms', ARGV[2], 'initial', ARGV[3])
local current = redis.call('GET', KEYS[2])
if current then return {0, tonumber(current)} end

-- Records user -> order for the pairs of `list` from index `from`; `user_first` says which of
-- each pair is the user (ARGV: user, order; the queued hash: order, user).
local function add_buyers(list, from, user_first)
  local batch = {}
  for i = from, #list - 1, 2 do
    local user, order = list[i], list[i + 1]
    if not user_first then user, order = order, user end
    batch[#batch + 1] = user
    batch[#batch + 1] = order
    if #batch == 1000 then
      redis.call('HSET', KEYS[3], unpack(batch))
      batch = {}
    end
  end
  if #batch > 0 then redis.call('HSET', KEYS[3], unpack(batch)) end
end

local moves = tonumber(ARGV[5])
for i = 6, 5 + moves, 1000 do
  local batch = {}
  for j = i, math.min(i + 999, 5 + moves) do
    batch[#batch + 1] = ARGV[j]
    batch[#batch + 1] = 1
  end
  redis.call('HSET', KEYS[5], unpack(batch))
end
add_buyers(ARGV, 6 + moves, true)
add_buyers(redis.call('HGETALL', KEYS[4]), 1, false)
local remaining = tonumber(ARGV[4]) - redis.call('HLEN', KEYS[4])
if remaining < 0 then remaining = 0 end
redis.call('SET', KEYS[2], remaining)
return {1, remaining}
