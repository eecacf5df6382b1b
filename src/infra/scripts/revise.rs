//! `lua/revise.lua`: an admin's edit of a sale that has not opened, into Redis in one step.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{Backend, MASTER_LIB};
use crate::infra::keys::VoucherKeys;

static REVISE: LazyLock<Script> =
    LazyLock::new(|| Script::new(&[MASTER_LIB, include_str!("../../../lua/revise.lua")].concat()));

/// The sale as edited, for Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revision {
    pub begins_ms: i64,
    pub ends_ms: i64,
    /// Units offered (initial + added).
    pub offered: i64,
    /// The change in units offered, added to the units left.
    pub delta: i64,
    /// A draw's entries opening; `None` for first come.
    pub entries_ms: Option<i64>,
}

/// What the edit did in Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revised {
    /// Redis holds the new window and stock.
    Applied,
    /// Redis holds no stock for the sale: a preload reads PostgreSQL.
    NotLoaded,
    /// Not reconciled under this master: the reconciliation reads PostgreSQL.
    Unreconciled,
    /// The sale opened by the Redis clock (or holds orders or entries): nothing changed.
    Opened,
}

/// Runs `lua/revise.lua` on one voucher's keys.
pub async fn revise<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    r: &Revision,
) -> Result<Revised, Backend> {
    let reply: Vec<i64> = REVISE
        .key(&keys.sale)
        .key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.entries)
        .arg(r.begins_ms)
        .arg(r.ends_ms)
        .arg(r.offered)
        .arg(r.delta)
        .arg(r.entries_ms.map_or_else(String::new, |ms| ms.to_string()))
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0] => Ok(Revised::Applied),
        [1] => Ok(Revised::NotLoaded),
        [2] => Ok(Revised::Unreconciled),
        [3] => Ok(Revised::Opened),
        _ => Err(Backend::unknown_reply("revise", &reply)),
    }
}
