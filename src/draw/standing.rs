//! [`standing`]: where a shopper stands in a draw (`GET /api/vouchers/{id}/entries/me`): their
//! receipt, their leaf's inclusion proof once the list is committed, their rank once drawn, and
//! the order the draw gave them.

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use crate::{
    domain::{fair, EntryState, OrderId, UserId, VoucherId},
    infra::store,
    Core,
};

use super::{draw_sale, transcript::leaves, DrawError, Receipt};

/// An RFC 9162 inclusion proof of a leaf in the committed list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Proof {
    /// The leaf's place in the sorted leaves, 0 first.
    pub index: u64,
    pub tree_size: u64,
    /// Sibling hashes from the leaf up, hex.
    pub path: Vec<String>,
}

/// Where a shopper stands in a draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub state: EntryState,
    /// The shopper's receipt, once entered.
    pub receipt: Option<Receipt>,
    /// Their leaf's inclusion proof, once the list is committed.
    pub proof: Option<Proof>,
    /// The order the draw gave them, once won.
    pub order_id: Option<OrderId>,
    /// Their rank (1 first), once the ranking is recorded.
    pub rank: Option<i64>,
    /// The move that gave them a unit that came back, once recorded.
    pub moved: Option<Moved>,
    pub entrants: i64,
    /// When the draw runs: the sale's start.
    pub draw_at: DateTime<Utc>,
}

/// A move as the transcript shows it, with its place there (1 first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub seq: i64,
    pub step: fair::Move,
}

/// `leaf`'s inclusion proof in the sorted `leaves`.
fn proof(leaves: &[fair::Hash], leaf: &fair::Hash) -> Option<Proof> {
    let index = leaves.binary_search(leaf).ok()?;
    fair::inclusion_proof(leaves, index).map(|path| Proof {
        index: u64::try_from(index).unwrap_or(u64::MAX),
        tree_size: u64::try_from(leaves.len()).unwrap_or(u64::MAX),
        path: path.iter().map(hex::encode).collect(),
    })
}

/// One pipelined read of a sale for a shopper: entrants, (cursor, drawn entrants), the order
/// held.
type SaleRead = (i64, (Option<i64>, Option<i64>), Option<String>);

/// `shopper`'s standing in `voucher`'s draw; for a visitor (`None`), the draw's entrants and
/// time alone.
pub async fn standing(
    core: &Core,
    shopper: Option<UserId>,
    voucher: VoucherId,
) -> Result<Standing, DrawError> {
    let (v, terms) = draw_sale(core, voucher).await?;
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let row = store::draws::get(&core.db, voucher).await?;
    let closed = row.as_ref().is_some_and(|r| r.closed.is_some());
    let mut standing = Standing {
        state: EntryState::None,
        receipt: None,
        proof: None,
        order_id: None,
        rank: None,
        moved: None,
        entrants: 0,
        draw_at: v.window.begins_at(),
    };
    let Some(shopper) = shopper else {
        standing.entrants = if closed {
            i64::try_from(leaves(core, voucher).await?.sorted.len()).unwrap_or(0)
        } else {
            redis.scard(&keys.entries).await?
        };
        return Ok(standing);
    };
    let (entrants, (cursor, drawn_entrants), held): SaleRead = redis::pipe()
        .scard(&keys.entries)
        .hmget(&keys.sale, &["draw_cursor", "draw_entrants"])
        .hget(&keys.buyers, shopper.get())
        .query_async(&mut redis)
        .await?;
    standing.entrants = drawn_entrants.unwrap_or(entrants);
    let entry = store::draw_log::get(&core.db, voucher, shopper).await?;
    let Some(entry) = entry else {
        return Ok(standing);
    };
    let key = terms.signing_key(&core.config.draw)?;
    standing.receipt = Some(Receipt::of(&v, &terms, key, &entry));
    if closed {
        let leaves = leaves(core, voucher).await?;
        standing.entrants = i64::try_from(leaves.sorted.len()).unwrap_or(i64::MAX);
        standing.proof = proof(&leaves.sorted, &entry.leaf);
    }
    let recorded = row.as_ref().and_then(|r| r.recorded);
    let rank0 = match recorded {
        Some(_) => store::draws::rank_of(&core.db, voucher, shopper).await?,
        None => None,
    };
    standing.rank = rank0.map(|r| r + 1);
    let drawn = cursor.is_some() || recorded.is_some();
    if !drawn {
        // A sale an admin ended before its start never draws: nobody won it.
        standing.state = if v.window.ends_at() <= Utc::now() {
            EntryState::Lost
        } else {
            EntryState::Entered
        };
        return Ok(standing);
    }
    let (state, order) = outcome(
        core,
        voucher,
        shopper,
        held,
        (rank0, cursor),
        recorded.is_some(),
    )
    .await?;
    standing.state = state;
    standing.order_id = order;
    standing.moved = store::draws::move_of(&core.db, voucher, shopper)
        .await?
        .map(|m| Moved {
            seq: m.seq,
            step: super::transcript::step(m),
        });
    Ok(standing)
}

/// A drawn sale's outcome for an entrant ranked `rank0` (from 0) while the draw's cursor is at
/// `cursor`: won (with the order it holds, once written), lost, or still being recorded.
async fn outcome(
    core: &Core,
    voucher: VoucherId,
    shopper: UserId,
    held: Option<String>,
    (rank0, cursor): (Option<i64>, Option<i64>),
    recorded: bool,
) -> Result<(EntryState, Option<OrderId>), DrawError> {
    let order = match held.and_then(|hex| OrderId::from_redis_hex(&hex).ok()) {
        Some(order) => Some(order),
        None => store::draws::latest_order(&core.db, voucher, shopper).await?,
    };
    let reached = matches!((rank0, cursor), (Some(r), Some(c)) if r < c);
    let state = match (order, recorded) {
        (Some(_), _) => EntryState::Won,
        (None, _) if reached => EntryState::Won,
        (None, true) => EntryState::Lost,
        // Drawn, being recorded: winners already hold their order; the rest learn in a moment.
        (None, false) => EntryState::Entered,
    };
    Ok((state, order))
}
