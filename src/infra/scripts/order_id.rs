//! `lua/next_order_id.lua`: one global order ID on its own (the admission script draws its own).

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{order_id, Backend, CounterDay, ORDER_ID_LIB};
use crate::{
    domain::{OrderId, Shard},
    infra::keys::Keys,
};

static NEXT_ORDER_ID: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&[ORDER_ID_LIB, include_str!("../../../lua/next_order_id.lua")].concat())
});

/// Why no order ID could be drawn.
#[derive(Debug, thiserror::Error)]
pub enum NextIdError {
    #[error(transparent)]
    Script(#[from] Backend),
    #[error("the shard's 2^24 order IDs of the day are exhausted")]
    Exhausted,
}

/// Draws one order ID on `shard` (retrying once with the Redis clock's day around midnight).
pub async fn next_order_id<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    shard: Shard,
) -> Result<OrderId, NextIdError> {
    let mut day = CounterDay::today();
    for _ in 0..2 {
        let reply: Vec<i64> = NEXT_ORDER_ID
            .key(day.counter(keys, shard))
            .arg(day.get())
            .arg(shard.index())
            .invoke_async(conn)
            .await
            .map_err(Backend::from)?;
        let unknown = || Backend::unknown_reply("next_order_id", &reply);
        match reply.as_slice() {
            [0, secs, seq] => return Ok(order_id(*secs, *seq).ok_or_else(unknown)?),
            [1] => return Err(NextIdError::Exhausted),
            [2, redis_day] => day = CounterDay::from_days(*redis_day).ok_or_else(unknown)?,
            _ => return Err(unknown().into()),
        }
    }
    Err(Backend::unknown_reply("next_order_id", &[2, day.get()]).into())
}
