//! `lua/preload.lua`: loads a voucher's sale into Redis, or restores it after a loss.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;
use crate::{
    domain::{OrderId, UserId},
    infra::keys::VoucherKeys,
};

static PRELOAD: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/preload.lua")));

/// What a preload did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreloadOutcome {
    /// The stock was absent and is now this many units.
    Rebuilt { stock: i64 },
    /// The stock was live already and was left alone (the window was refreshed).
    AlreadyLoaded { stock: i64 },
}

/// What the preload script needs to know from PostgreSQL.
#[derive(Debug, Clone)]
pub struct PreloadInput<'a> {
    pub begins_ms: i64,
    pub ends_ms: i64,
    /// The stock the sale offers: initial plus added.
    pub total_stock: i64,
    /// Units PostgreSQL has not sold.
    pub db_stock: i64,
    /// The keys of every stock move PostgreSQL holds for the sale (read with `db_stock`).
    pub moves: &'a [String],
    /// Users holding live written orders, with those orders.
    pub buyers: &'a [(UserId, OrderId)],
}

/// Runs `lua/preload.lua` for one voucher.
pub async fn preload<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    input: &PreloadInput<'_>,
) -> Result<PreloadOutcome, Backend> {
    let mut call = PRELOAD.key(&keys.sale);
    call.key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.moves)
        .arg(input.begins_ms)
        .arg(input.ends_ms)
        .arg(input.total_stock)
        .arg(input.db_stock)
        .arg(input.moves.len());
    for key in input.moves {
        call.arg(key);
    }
    for (user, order) in input.buyers {
        call.arg(user.get()).arg(order.to_redis_hex());
    }
    let reply: Vec<i64> = call.invoke_async(conn).await?;
    match reply.as_slice() {
        [1, stock] => Ok(PreloadOutcome::Rebuilt { stock: *stock }),
        [0, stock] => Ok(PreloadOutcome::AlreadyLoaded { stock: *stock }),
        _ => Err(Backend::unknown_reply("preload", &reply)),
    }
}
