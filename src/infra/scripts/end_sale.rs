//! `lua/end_sale.lua`: moves a sale's end in Redis to now (by the Redis clock) or earlier.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;
use crate::infra::keys::VoucherKeys;

static END_SALE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/end_sale.lua")));

/// What ending a sale in Redis did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaleEnd {
    /// Admissions stop from this instant (ms since the epoch, Redis clock).
    Ended { at_ms: i64 },
    /// Redis holds no sale state: nothing to stop (a restore reads PostgreSQL's end).
    NotLoaded,
}

/// Runs `lua/end_sale.lua`: the end becomes the earliest of its current value, `db_end_ms`
/// (what PostgreSQL recorded) and the Redis clock's now.
pub async fn end_sale<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    db_end_ms: i64,
) -> Result<SaleEnd, Backend> {
    let reply: Vec<i64> = END_SALE
        .key(&keys.sale)
        .arg(db_end_ms)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0, at_ms] => Ok(SaleEnd::Ended { at_ms: *at_ms }),
        [1] => Ok(SaleEnd::NotLoaded),
        _ => Err(Backend::unknown_reply("end_sale", &reply)),
    }
}
