-- Prepended to the scripts that change a sale (admit, settle, apply_move, preload).
--
-- master_id(): this Redis master's replication ID (INFO replication's master_replid). Redis
-- draws a new one at every start and whenever a replica is promoted, so it names the history of
-- writes this node holds. A sale records the ID its state was last checked against PostgreSQL
-- under (field `master` of its sale hash, written by preload.lua); another ID means the state
-- may have lost writes PostgreSQL holds (a failover to a lagging replica, a restart from an AOF
-- that lost its last second), and nothing may change the sale until it is reconciled
-- (design.md decision 32). Scripts replicate by their effects, so reading INFO here is safe.
local function master_id()
  return string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
end

-- Whether the sale hash `key` was checked under this master (false for a hash without the field).
local function reconciled(key)
  return redis.call('HGET', key, 'master') == master_id()
end
