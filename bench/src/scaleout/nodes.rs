//! What each Redis node did: which master holds a key, and the admission script's calls per
//! node (`INFO commandstats`).

use std::collections::BTreeMap;

use anyhow::Context;
use redis::Value;
use seckill::{domain::VoucherId, Core};

/// The master (`host:port`) serving `key`'s slot; on one node, that node.
pub async fn master_of(core: &Core, key: &str) -> anyhow::Result<String> {
    if !core.redis.is_cluster() {
        return Ok("the node".to_owned());
    }
    let mut redis = core.redis.clone();
    let slot: i64 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut redis)
        .await?;
    let ranges: Value = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut redis)
        .await?;
    let Value::Array(ranges) = ranges else {
        anyhow::bail!("CLUSTER SLOTS answered {ranges:?}");
    };
    for range in ranges {
        let Value::Array(parts) = range else { continue };
        let (Some(start), Some(end), Some(Value::Array(master))) =
            (parts.first(), parts.get(1), parts.get(2))
        else {
            continue;
        };
        let start: i64 = redis::from_redis_value(start.clone())?;
        let end: i64 = redis::from_redis_value(end.clone())?;
        if (start..=end).contains(&slot) {
            let host: String = redis::from_redis_value(master[0].clone())?;
            let port: i64 = redis::from_redis_value(master[1].clone())?;
            return Ok(format!("{host}:{port}"));
        }
    }
    anyhow::bail!("no master serves slot {slot}")
}

/// The master of a voucher's sale.
pub async fn master_of_voucher(core: &Core, voucher: VoucherId) -> anyhow::Result<String> {
    master_of(core, &core.keys.voucher(voucher).stock).await
}

/// `EVALSHA` calls so far on each node named in `REDIS_URL`.
pub async fn evalsha_calls(core: &Core) -> anyhow::Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for client in core.redis_deployment().seed_clients() {
        let name = client.get_connection_info().addr().to_string();
        let mut node = client
            .get_multiplexed_async_connection()
            .await
            .with_context(|| format!("connecting to {name}"))?;
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(&mut node)
            .await?;
        let calls = info
            .lines()
            .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        out.insert(name, calls);
    }
    Ok(out)
}
