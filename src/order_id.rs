//! The global order ID generator (design.md §3).
//!
//! IDs are drawn by Lua on the Redis server, from the Redis clock and a per-UTC-day `INCR`
//! counter, so every instance of every deployment on one Redis draws from the same sequence:
//! unique across instances and restarts, and increasing with the (Redis) second. The admission
//! script draws its ID inside the same script (one round trip); [`next`] is the same code on its
//! own, for anything else that needs an ID.
//!
//! Limit: the day counter is a key outside the voucher's hash slot. On a single Redis, or a
//! primary with replicas, that is fine; on Redis Cluster the counter would have to live in the
//! voucher's slot (per-voucher sequence) or be drawn in a second round trip.

use redis::aio::ConnectionLike;

use crate::{domain::OrderId, keys::Keys, scripts};

pub use scripts::NextIdError;

/// Draws the next global order ID.
pub async fn next<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
) -> Result<OrderId, NextIdError> {
    scripts::next_order_id(conn, keys).await
}
