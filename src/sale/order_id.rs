//! The global order ID generator (design.md §3).
//!
//! IDs are drawn by Lua on the Redis server, from the Redis clock and a per-shard, per-UTC-day
//! `INCR` counter that lives in the shard's slot beside its vouchers' keys (see
//! [`crate::domain::Shard`]): every instance draws a shard's IDs from the same counter, and the
//! shard is part of the sequence, so IDs are unique across instances, restarts, shards and Redis
//! Cluster masters, and increase with the (Redis) second. The admission script draws its ID
//! inside the same script (one round trip, one slot); `next` (built for tests) is the same
//! code on its own.
//!
//! A counter can go back: Redis restarted from an AOF that missed its last second (`everysec`
//! and a machine crash), or a failover to a lagging replica. [`raise_past_stored`] puts it above
//! every sequence PostgreSQL holds for the day when a sale is restored; an ID reused anyway is
//! refused by the worker (`duplicate_id`), never taken for the written order it collides with.

use chrono::{DateTime, Utc};

use crate::{
    domain::{OrderId, Shard, ORDER_EPOCH_UNIX, SECS_PER_DAY},
    infra::{backend::Backend, scripts, store},
    Core,
};

/// Raises `shard`'s counter of `now`'s UTC day above the highest count PostgreSQL holds for that
/// shard and day; returns the counter afterwards.
pub async fn raise_past_stored(
    core: &Core,
    shard: Shard,
    now: DateTime<Utc>,
) -> Result<i64, Backend> {
    let day = now.date_naive();
    let start = day.and_time(chrono::NaiveTime::MIN).and_utc().timestamp();
    let first_id = |secs: i64| {
        u32::try_from(secs - ORDER_EPOCH_UNIX)
            .ok()
            .and_then(|s| OrderId::from_parts(s, 0).ok())
    };
    let (Some(from), Some(until)) = (first_id(start), first_id(start + SECS_PER_DAY)) else {
        // A day outside the IDs' range (136 years from the epoch) holds no order to step past.
        return Ok(0);
    };
    let highest = store::orders::highest_count(&core.db, shard, from, until)
        .await?
        .unwrap_or(0);
    let mut redis = core.redis.clone();
    let counter = core.keys.order_counter(shard, day);
    scripts::raise_counter(&mut redis, &counter, highest).await
}

#[cfg(feature = "testing")]
pub use scripts::NextIdError;

#[cfg(feature = "testing")]
/// Draws the next global order ID on `shard`.
pub async fn next<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    keys: &crate::infra::keys::Keys,
    shard: Shard,
) -> Result<OrderId, NextIdError> {
    scripts::next_order_id(conn, keys, shard).await
}
