//! `lua/draw_open.lua` and `lua/draw_admit.lua`: a draw sale's draw (design.md decision 34).

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{Backend, CounterDay, MASTER_LIB, ORDER_ID_LIB, TAKE_LIB};
use crate::{
    domain::{Shard, UserId, VoucherId},
    infra::keys::Keys,
};

static DRAW_OPEN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&[MASTER_LIB, include_str!("../../../lua/draw_open.lua")].concat())
});
static DRAW_ADMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        &[
            MASTER_LIB,
            ORDER_ID_LIB,
            TAKE_LIB,
            include_str!("../../../lua/draw_admit.lua"),
        ]
        .concat(),
    )
});

/// What `lua/draw_open.lua` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawOpen {
    /// The entries are frozen: the draw's cursor and its entrants.
    Open {
        cursor: i64,
        entrants: i64,
    },
    /// The sale begins in this many ms by the Redis clock.
    NotYet {
        ms: i64,
    },
    /// The start is reached and the draw not opened (only asked: nothing written).
    Due,
    NotADraw,
    NotLoaded,
    Unreconciled,
}

/// Opens `voucher`'s draw once its sale began, with the `entrants` of its closed entry log
/// (idempotent); with `None`, only asks whether it is due or open.
pub async fn draw_open<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    entrants: Option<i64>,
) -> Result<DrawOpen, Backend> {
    let k = keys.voucher(voucher);
    let reply: Vec<i64> = DRAW_OPEN
        .key(&k.sale)
        .key(&k.stock)
        .arg(entrants.map(|n| n.to_string()).unwrap_or_default())
        .invoke_async(conn)
        .await?;
    match *reply.as_slice() {
        [0, cursor, entrants] => Ok(DrawOpen::Open { cursor, entrants }),
        [3, ms] => Ok(DrawOpen::NotYet { ms }),
        [13] => Ok(DrawOpen::Due),
        [4] => Ok(DrawOpen::NotADraw),
        [5] => Ok(DrawOpen::NotLoaded),
        [9] => Ok(DrawOpen::Unreconciled),
        _ => Err(Backend::unknown_reply("draw_open", &reply)),
    }
}

/// What `lua/draw_admit.lua` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawAdmit {
    /// The cursor moved to `cursor`; `stock` units are left; `admitted` orders were enqueued.
    Advanced {
        cursor: i64,
        stock: i64,
        admitted: i64,
    },
    /// The sale's cursor is this one, not the slice's: nothing was written.
    Moved {
        cursor: i64,
    },
    Ended,
    /// The day's order IDs are spent; the cursor stopped here.
    IdsExhausted {
        cursor: i64,
    },
    NotOpened,
    NotLoaded,
    Unreconciled,
}

/// Admits `ranked` (the entrants of ranks `cursor`, `cursor + 1`, ...) while units are left.
/// Around midnight the script names the Redis clock's day and the call is made once more.
pub async fn draw_admit<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    cursor: i64,
    ranked: &[UserId],
) -> Result<DrawAdmit, Backend> {
    let mut day = CounterDay::today();
    for _ in 0..2 {
        let k = keys.voucher(voucher);
        let shard = Shard::of_voucher(voucher);
        let mut call = DRAW_ADMIT.prepare_invoke();
        call.key(&k.sale)
            .key(&k.stock)
            .key(&k.buyers)
            .key(&k.queued)
            .key(&k.orders)
            .key(day.counter(keys, shard))
            .arg(day.get())
            .arg(voucher.get())
            .arg(shard.index())
            .arg(cursor);
        for user in ranked {
            call.arg(user.get());
        }
        let reply: Vec<i64> = call.invoke_async(conn).await?;
        return match *reply.as_slice() {
            [0, cursor, stock, admitted] => Ok(DrawAdmit::Advanced {
                cursor,
                stock,
                admitted,
            }),
            [11, cursor] => Ok(DrawAdmit::Moved { cursor }),
            [4] => Ok(DrawAdmit::Ended),
            [6, cursor] => Ok(DrawAdmit::IdsExhausted { cursor }),
            [12] => Ok(DrawAdmit::NotOpened),
            [5] => Ok(DrawAdmit::NotLoaded),
            [9] => Ok(DrawAdmit::Unreconciled),
            [8, other] => {
                day = CounterDay::from_days(other)
                    .ok_or_else(|| Backend::unknown_reply("draw_admit", &reply))?;
                continue;
            }
            _ => Err(Backend::unknown_reply("draw_admit", &reply)),
        };
    }
    Err(Backend::unknown_reply("draw_admit", &[8]))
}
