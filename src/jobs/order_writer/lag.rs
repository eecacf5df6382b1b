//! How far behind the order writers are: the age of the oldest order still on any voucher's
//! queue, on the Redis clock. Entries leave a stream only once written and settled, and their
//! IDs carry the Redis time they were added at, so the first entry of each stream tells it.

use std::time::Duration;

use redis::{streams::StreamRangeReply, AsyncCommands};

use crate::{domain::VoucherId, Core};

/// The age of the oldest queued order, `None` when nothing is queued.
pub async fn oldest_queued_age(core: &Core) -> Result<Option<Duration>, redis::RedisError> {
    let mut redis = core.redis.clone();
    let ids: Vec<i64> = redis.smembers(core.keys.preloaded_vouchers()).await?;
    let vouchers: Vec<VoucherId> = ids
        .into_iter()
        .filter_map(|id| VoucherId::try_from(id).ok())
        .collect();
    // One read per stream, all in flight at once (a pipeline across vouchers would span slots
    // on a Redis Cluster), and the clock of the node that answers TIME.
    let firsts = futures::future::try_join_all(vouchers.iter().map(|v| {
        let mut redis = core.redis.clone();
        let stream = core.keys.voucher(*v).orders;
        async move {
            redis
                .xrange_count::<_, _, _, _, StreamRangeReply>(stream, "-", "+", 1)
                .await
        }
    }))
    .await?;
    let time: (u64, u64) = redis::cmd("TIME").query_async(&mut redis).await?;
    let now_ms = time.0 * 1_000 + time.1 / 1_000;
    let oldest_ms = firsts
        .iter()
        .filter_map(|r| r.ids.first())
        .filter_map(|e| entry_millis(&e.id))
        .min();
    Ok(oldest_ms.map(|ms| Duration::from_millis(now_ms.saturating_sub(ms))))
}

/// The milliseconds part of a stream entry ID (`<ms>-<seq>`).
fn entry_millis(id: &str) -> Option<u64> {
    id.split_once('-')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::entry_millis;

    #[test]
    fn an_entry_id_carries_its_redis_time() {
        assert_eq!(entry_millis("1700000000123-4"), Some(1_700_000_000_123));
        assert_eq!(entry_millis("garbage"), None);
    }
}
