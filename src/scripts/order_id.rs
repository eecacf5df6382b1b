//! `lua/next_order_id.lua`: one global order ID on its own (the admission script draws its own).

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{order_id, ScriptError, ORDER_ID_LIB};
use crate::{domain::OrderId, keys::Keys};

static NEXT_ORDER_ID: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&[ORDER_ID_LIB, include_str!("../../lua/next_order_id.lua")].concat())
});

/// Why no order ID could be drawn.
#[derive(Debug, thiserror::Error)]
pub enum NextIdError {
    #[error(transparent)]
    Script(#[from] ScriptError),
    #[error("the day's 2^32 order IDs are exhausted")]
    Exhausted,
}

/// Draws one order ID.
pub async fn next_order_id<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
) -> Result<OrderId, NextIdError> {
    let reply: Vec<i64> = NEXT_ORDER_ID
        .arg(keys.order_counter_prefix())
        .invoke_async(conn)
        .await
        .map_err(ScriptError::from)?;
    let unknown = || ScriptError::unknown("next_order_id", &reply);
    match reply.as_slice() {
        [0, secs, seq] => Ok(order_id(*secs, *seq).ok_or_else(unknown)?),
        [1] => Err(NextIdError::Exhausted),
        _ => Err(unknown().into()),
    }
}
