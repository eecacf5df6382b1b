-- Library prepended after order_id.lua to the scripts that admit an order (admit.lua, a buy;
-- draw_admit.lua, an entrant drawn): the one place a unit is taken and its order enqueued.
--
-- take_unit(k, voucher, shard, now_sec, user) with k = {stock, buyers, queued, orders, counter}
-- (key names, all in the voucher's slot) and k.built (the sale hash's `built`, '' when absent): draws the next order ID, takes one unit, records the
-- buyer and the queued order, and appends the order to the stream. Returns the ID's seconds and
-- sequence, or nil when the day's IDs are spent (nothing written). The caller checked the stock.
-- The stock is decremented before the buyer is recorded, so a script stopped half-way (an error
-- on a write) never leaves a buyer whose unit was not taken.
local function take_unit(k, voucher, shard, now_sec, user)
  local secs, seq = next_order_id(k.counter, shard, now_sec)
  if not secs then return nil end
  local order = string.format('%08x%08x', secs, seq)
  -- A day counter that went back (a failover to a lagging replica, an AOF loss) may hand out an
  -- ID still queued on this sale: step past it, as the queued hash holds one shopper per ID. (An
  -- ID already written is caught by the worker, which refuses the second order as duplicate_id.)
  while redis.call('HEXISTS', k.queued, order) == 1 do
    secs, seq = next_order_id(k.counter, shard, now_sec)
    if not secs then return nil end
    order = string.format('%08x%08x', secs, seq)
  end
  redis.call('DECR', k.stock)
  redis.call('HSET', k.buyers, user, order)
  redis.call('HSET', k.queued, order, user)
  redis.call('XADD', k.orders, '*', 'order', order, 'user', user, 'voucher', voucher, 'built', k.built)
  return secs, seq
end
