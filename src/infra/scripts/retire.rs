//! `lua/retire.lua`: deletes a finished, drained sale's Redis state.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;
use crate::infra::keys::VoucherKeys;

static RETIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/retire.lua")));

/// What `lua/retire.lua` did with a finished sale's Redis state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retirement {
    /// Deleted: the sale ended past the grace period and nothing was left to write.
    Retired,
    /// The sale (plus grace) ends this many milliseconds from now.
    NotDue { in_ms: i64 },
    /// Orders are still queued or on the stream; the worker has not finished.
    StillQueued { orders: i64 },
    /// There was no sale state to retire.
    Absent,
}

/// Runs `lua/retire.lua` on one voucher's keys.
pub async fn retire<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    grace_ms: u64,
) -> Result<Retirement, Backend> {
    let reply: Vec<i64> = RETIRE
        .key(&keys.sale)
        .key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.orders)
        .key(&keys.moves)
        .key(&keys.entries)
        .arg(grace_ms)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0] => Ok(Retirement::Retired),
        [1, ms] => Ok(Retirement::NotDue { in_ms: *ms }),
        [2, n] => Ok(Retirement::StillQueued { orders: *n }),
        [3] => Ok(Retirement::Absent),
        _ => Err(Backend::unknown_reply("retire", &reply)),
    }
}
