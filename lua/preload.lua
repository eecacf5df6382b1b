-- Loads a voucher's sale into Redis, restores it after Redis lost it, or reconciles it after its
-- master changed (prepended with master.lua). Idempotent.
--
-- KEYS[1] sale hash   KEYS[2] stock   KEYS[3] buyers hash (user -> order)   KEYS[4] queued hash
-- KEYS[5] applied stock moves (hash: move key -> 1, see apply_move.lua)
-- ARGV[1] begins_ms   ARGV[2] ends_ms   ARGV[3] stock offered (initial + added)
-- ARGV[4] units PostgreSQL has not sold (vouchers.stock)
-- ARGV[5] mode: 'check', 'load', 'refresh' or 'reconcile'
-- ARGV[6] a draw sale's entries_ms ('' for first come)   ARGV[7], ARGV[8] a recorded draw's
-- cursor and entrants ('' before its record; design.md decision 34)
-- ARGV[9] m, then ARGV[10 .. 9+m] the keys of every stock move PostgreSQL holds for the sale
-- then pairs: user, order (16-hex) of each live written order, and '', order of each written
-- order cancelled since (written, nobody's buyer)
-- (ARGV[4], the moves and the pairs are one PostgreSQL snapshot; 'check' sends none.)
--
-- A present stock is live state that admissions and the worker own, checked against
-- PostgreSQL under this master (master.lua):
--   'check'     writes nothing: {0, stock} checked, {2} not checked under this master, {3} no
--               stock in Redis
--   'load'      (re)writes the window of a checked sale: {0, stock}; {2} for one not checked
--               (nothing written); an absent stock is rebuilt
--   'refresh'   'load' sent without the snapshot a rebuild needs (read while the stock was
--               present): an absent stock is {3}, nothing written
--   'reconcile' rebuilds a sale not checked under this master; {0, stock} when it was
-- The rebuild: the buyers are those of written orders and of orders still queued here, every
-- stock move is marked applied (PostgreSQL's remainder already counts it), and the stock is
-- PostgreSQL's remainder minus the queued orders PostgreSQL does not hold, so it can never
-- exceed what PostgreSQL will accept. The worker settles no order and no move is applied while
-- the sale is unchecked (settle.lua, apply_move.lua), so every order written after the snapshot
-- is still queued here. A recorded draw's cursor is restored at least to PostgreSQL's (every rank
-- up to the last entrant holding an order was reached), so a sale whose Redis state was lost
-- does not reopen its draw. An order a worker held while the sale was lost and wrote after the
-- snapshot is neither queued nor in the snapshot: its settling finds the sale rebuilt since its
-- admission (`built`) and has the sale reconciled again (settle.lua). Returns {1, stock}.
local mode = ARGV[5]
-- PostgreSQL's opening: a draw's entries opening, or none for first come (an edit to a draw
-- that Redis took and PostgreSQL did not commit is undone here, decision 51).
local function set_entries(entries_ms)
  if entries_ms ~= '' then
    redis.call('HSET', KEYS[1], 'entries_ms', entries_ms)
  else
    redis.call('HDEL', KEYS[1], 'entries_ms')
  end
end
local current = redis.call('GET', KEYS[2])
if current then
  if not reconciled(KEYS[1]) then
    if mode ~= 'reconcile' then return {2} end
  else
    if mode == 'load' or mode == 'refresh' then
      redis.call('HSET', KEYS[1], 'begins_ms', ARGV[1], 'ends_ms', ARGV[2], 'initial', ARGV[3])
      set_entries(ARGV[6])
    end
    return {0, tonumber(current)}
  end
elseif mode == 'check' or mode == 'refresh' then
  return {3}
end

-- Each rebuild names itself (`built`): an order admitted before it carries the older name, so the
-- worker's settling can tell an order this rebuild may not have counted (settle.lua).
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'begins_ms', ARGV[1], 'ends_ms', ARGV[2], 'initial', ARGV[3],
  'master', master_id(), 'built', string.sub(master_id(), 1, 8) .. '.' .. t[1] .. '.' .. t[2])
set_entries(ARGV[6])
if ARGV[7] ~= '' then
  local cursor = math.max(tonumber(redis.call('HGET', KEYS[1], 'draw_cursor') or 0),
    tonumber(ARGV[7]))
  redis.call('HSET', KEYS[1], 'draw_cursor', cursor, 'draw_entrants', ARGV[8])
end
redis.call('DEL', KEYS[3], KEYS[5])

local moves = tonumber(ARGV[9])
for i = 10, 9 + moves, 1000 do
  local batch = {}
  for j = i, math.min(i + 999, 9 + moves) do
    batch[#batch + 1] = ARGV[j]
    batch[#batch + 1] = 1
  end
  redis.call('HSET', KEYS[5], unpack(batch))
end

-- Buyers are recorded 500 pairs per HSET.
local batch = {}
local function add_buyer(user, order)
  batch[#batch + 1] = user
  batch[#batch + 1] = order
  if #batch == 1000 then
    redis.call('HSET', KEYS[3], unpack(batch))
    batch = {}
  end
end

-- Written orders: their buyers, and which orders PostgreSQL holds ('live' or 'cancelled').
local written = {}
for i = 10 + moves, #ARGV - 1, 2 do
  if ARGV[i] == '' then
    written[ARGV[i + 1]] = 'cancelled'
  else
    written[ARGV[i + 1]] = 'live'
    add_buyer(ARGV[i], ARGV[i + 1])
  end
end
-- Queued orders: their buyers; those PostgreSQL does not hold yet still take a unit. One
-- written and cancelled since (its settling had not run) is nobody's: its shopper may buy
-- again, and its unit is in PostgreSQL's remainder.
local queued = redis.call('HGETALL', KEYS[4])
local unwritten = 0
for i = 1, #queued - 1, 2 do
  local order, user = queued[i], queued[i + 1]
  if not written[order] then unwritten = unwritten + 1 end
  if written[order] ~= 'cancelled' then add_buyer(user, order) end
end
if #batch > 0 then redis.call('HSET', KEYS[3], unpack(batch)) end

local remaining = tonumber(ARGV[4]) - unwritten
if remaining < 0 then remaining = 0 end
redis.call('SET', KEYS[2], remaining)
return {1, remaining}
