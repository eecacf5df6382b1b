//! What a draw shows: [`standing`], a shopper's place in it, and [`public`], what anyone may
//! check (the commitment before the draw; the seed and every tag after it).

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use crate::{
    domain::{EntryState, OrderId, UserId, VoucherId},
    infra::store,
    Core,
};

use super::{draw_sale, DrawError};

/// Where a shopper stands in a draw (`GET /api/vouchers/{id}/entries/me`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub state: EntryState,
    /// The shopper's tag (hex), once entered.
    pub tag: Option<String>,
    /// The order the draw gave them, once won.
    pub order_id: Option<OrderId>,
    /// Their rank (0 first), once the ranking is recorded.
    pub rank: Option<i64>,
    pub entrants: i64,
    /// When the draw runs: the sale's start.
    pub draw_at: DateTime<Utc>,
}

/// One pipelined read of a sale for a shopper: entered, entrants, (cursor, drawn entrants), the
/// order held.
type SaleRead = (bool, i64, (Option<i64>, Option<i64>), Option<String>);

/// `shopper`'s standing in `voucher`'s draw; for a visitor (`None`), the draw's entrants and
/// time alone.
pub async fn standing(
    core: &Core,
    shopper: Option<UserId>,
    voucher: VoucherId,
) -> Result<Standing, DrawError> {
    let (v, seed) = draw_sale(core, voucher).await?;
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let Some(shopper) = shopper else {
        let entrants: i64 = redis.scard(&keys.entries).await?;
        let recorded = store::draws::get(&core.db, voucher)
            .await?
            .and_then(|r| r.recorded);
        return Ok(Standing {
            state: EntryState::None,
            tag: None,
            order_id: None,
            rank: None,
            entrants: recorded.map_or(entrants, |(_, n)| n),
            draw_at: v.window.begins_at(),
        });
    };
    let (member, entrants, (cursor, drawn_entrants), held): SaleRead = redis::pipe()
        .sismember(&keys.entries, shopper.get())
        .scard(&keys.entries)
        .hmget(&keys.sale, &["draw_cursor", "draw_entrants"])
        .hget(&keys.buyers, shopper.get())
        .query_async(&mut redis)
        .await?;
    let row = store::draws::get(&core.db, voucher).await?;
    let recorded = row.as_ref().and_then(|r| r.recorded);
    let rank = match recorded {
        Some(_) => store::draws::rank_of(&core.db, voucher, shopper).await?,
        None => None,
    };
    let entered = member || rank.is_some();
    let entrants = recorded.map_or(drawn_entrants.unwrap_or(entrants), |(_, n)| n);
    let mut standing = Standing {
        state: EntryState::None,
        tag: entered.then(|| hex::encode(seed.tag(shopper))),
        order_id: None,
        rank,
        entrants,
        draw_at: v.window.begins_at(),
    };
    if !entered {
        return Ok(standing);
    }
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
    let order = match held.and_then(|hex| OrderId::from_redis_hex(&hex).ok()) {
        Some(order) => Some(order),
        None => store::draws::latest_order(&core.db, voucher, shopper).await?,
    };
    let reached = matches!((rank, cursor), (Some(r), Some(c)) if r < c);
    standing.state = match (order, recorded) {
        (Some(order), _) => {
            standing.order_id = Some(order);
            EntryState::Won
        }
        (None, _) if reached => EntryState::Won,
        (None, Some(_)) => EntryState::Lost,
        // Drawn, being recorded: winners already hold their order; the rest learn in a moment.
        (None, None) => EntryState::Entered,
    };
    Ok(standing)
}

/// A draw as anyone may check it (`GET /api/vouchers/{id}/draw`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicDraw {
    /// SHA-256 of the seed (hex).
    pub commitment: String,
    pub entrants: i64,
    /// After the draw: the seed (hex) and every entrant's tag (hex), ascending.
    pub revealed: Option<Revealed>,
}

/// What the draw reveals once recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revealed {
    pub seed: String,
    pub tags: Vec<String>,
    pub drawn_at: DateTime<Utc>,
}

/// `voucher`'s draw as anyone may check it. The seed is read only once the ranking is
/// recorded, so it never leaves before the entries are frozen and ranked.
pub async fn public(core: &Core, voucher: VoucherId) -> Result<PublicDraw, DrawError> {
    let (_, seed) = draw_sale(core, voucher).await?;
    // A recorded draw never changes: its 100,000 tags are read from PostgreSQL once per
    // instance, not once per request (anyone may ask, as often as they like).
    if let Some(drawn) = core.draw_reveals.get(&voucher) {
        return Ok(PublicDraw::clone(&drawn));
    }
    let commitment = hex::encode(seed.commitment());
    let row = store::draws::get(&core.db, voucher).await?;
    if let Some((drawn_at, entrants)) = row.and_then(|r| r.recorded) {
        let tags = store::draws::tags(&core.db, voucher).await?;
        let drawn = std::sync::Arc::new(PublicDraw {
            commitment,
            entrants,
            revealed: Some(Revealed {
                seed: hex::encode(seed.expose()),
                tags: tags.iter().map(hex::encode).collect(),
                drawn_at,
            }),
        });
        core.draw_reveals
            .insert(voucher, std::sync::Arc::clone(&drawn));
        return Ok(PublicDraw::clone(&drawn));
    }
    let mut redis = core.redis.clone();
    let entrants: i64 = redis.scard(core.keys.voucher(voucher).entries).await?;
    Ok(PublicDraw {
        commitment,
        entrants,
        revealed: None,
    })
}
