//! `lua/apply_move.lua`: applies one stock move of PostgreSQL's outbox to a sale's Redis state,
//! once.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{Backend, MASTER_LIB};
use crate::infra::{keys::VoucherKeys, stock_move::StockMove};

static APPLY_MOVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&[MASTER_LIB, include_str!("../../../lua/apply_move.lua")].concat())
});

/// What applying a move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveApplied {
    /// The stock went up; it is now this many units.
    Applied { stock: i64 },
    /// The move had been applied before; nothing changed.
    AlreadyApplied { stock: i64 },
    /// Redis holds no stock for the sale: nothing changed (a restore reads PostgreSQL's stock,
    /// which counts the move).
    NotLoaded,
    /// The sale was not reconciled since its Redis master changed: nothing changed.
    Unreconciled,
}

/// Runs `lua/apply_move.lua` on one voucher's keys.
pub async fn apply_move<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    m: &StockMove,
) -> Result<MoveApplied, Backend> {
    let (user, order) = m.release.map_or((String::new(), String::new()), |(u, o)| {
        (u.get().to_string(), o.to_redis_hex())
    });
    let reply: Vec<i64> = APPLY_MOVE
        .key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.moves)
        .key(&keys.sale)
        .arg(&m.key)
        .arg(m.units)
        .arg(user)
        .arg(order)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0, stock] => Ok(MoveApplied::Applied { stock: *stock }),
        [1, stock] => Ok(MoveApplied::AlreadyApplied { stock: *stock }),
        [2] => Ok(MoveApplied::NotLoaded),
        [3] => Ok(MoveApplied::Unreconciled),
        _ => Err(Backend::unknown_reply("apply_move", &reply)),
    }
}
