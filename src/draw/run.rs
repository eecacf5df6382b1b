//! [`run`]: a draw sale's draw at its start, and [`advance`]: units that come back afterwards
//! go to the next entrants by rank.
//!
//! The draw, under the lock `draw:{voucher}` (one instance at a time; any instance may run it; a
//! short lease renewed while held, `SECKILL_LOCK_LEASE_MS`, so an instance that dies mid-draw
//! holds the rest up for seconds):
//! 1. `lua/draw_open.lua` freezes the entries once the Redis clock reaches the start.
//! 2. The entries are read and ranked by their tags ([`Seed::rank`]); the same frozen set and
//!    seed give the same ranking on every instance and every attempt.
//! 3. `lua/draw_admit.lua` admits the ranking from its cursor, a slice per call, while units
//!    are left: each winner's order takes the buy's path (ID, stream, the order writer).
//! 4. The ranking is recorded in PostgreSQL (`draws`, `draw_entries`) in one transaction.
//!
//! A crash anywhere leaves the draw unrecorded, and the next attempt resumes: the entries stay
//! frozen, the ranking is recomputed, and the cursor (in the sale's hash, moved by the script
//! in the same step as its admissions) skips every rank already reached. Recording after
//! admitting keeps PostgreSQL's write of the ranking (100,000 rows) out of the opening second.

use std::time::Duration;

use redis::AsyncCommands;

use crate::{
    catalog,
    domain::{UserId, VoucherId},
    infra::{
        backend::Backend,
        scripts::{self, DrawAdmit, DrawOpen},
        store,
    },
    Core,
};

use super::{draw_sale, DrawError};

/// Entrants sent per `draw_admit.lua` call: a call takes about a millisecond per hundred
/// admissions, so other commands wait at most some milliseconds behind one.
const SLICE: usize = 1_000;

/// What a draw did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawReport {
    pub entrants: i64,
    /// Orders admitted by this run (a resumed run counts only its own).
    pub admitted: i64,
    /// The ranks reached.
    pub cursor: i64,
    /// Whether this run recorded the ranking (false: another instance did first).
    pub recorded: bool,
}

/// Runs `voucher`'s draw if it is due and not recorded: `Ok(None)` when another instance holds
/// the draw's lock, or it was recorded before. Waits for the Redis clock to reach the start.
pub async fn run(core: &Core, voucher: VoucherId) -> Result<Option<DrawReport>, DrawError> {
    let (_, seed) = draw_sale(core, voucher).await?;
    let recorded = |row: Option<store::draws::DrawRow>| row.and_then(|r| r.recorded).is_some();
    if recorded(store::draws::get(&core.db, voucher).await?) {
        return Ok(None);
    }
    let Some(guard) = core
        .locks
        .try_acquire(&format!("draw:{voucher}"), Duration::ZERO)
        .await?
    else {
        return Ok(None);
    };
    // Recorded by the instance that held the lock just before.
    if recorded(store::draws::get(&core.db, voucher).await?) {
        guard.finish("draw").await;
        return Ok(None);
    }
    let (cursor, entrants) = open(core, voucher).await?;
    let mut redis = core.redis.clone();
    let members: Vec<i64> = redis.smembers(core.keys.voucher(voucher).entries).await?;
    if i64::try_from(members.len()).ok() != Some(entrants) {
        // The set is frozen by the script that counted it: another count means its state was
        // lost or changed under the draw (a restore from an older copy). Do not rank it.
        return Err(Backend::unknown_reply("draw entries", &[entrants]).into());
    }
    let ranking = seed.rank(members.into_iter().map(UserId::from_db));
    let users: Vec<UserId> = ranking.iter().map(|(u, _)| *u).collect();
    let (cursor, admitted) = admit_from(core, voucher, &users, cursor).await?;
    let recorded = store::draws::record(&core.db, voucher, &ranking).await?;
    guard.finish("draw").await;
    metrics::counter!("seckill_draws_total").increment(1);
    tracing::info!(%voucher, entrants, admitted, cursor, recorded, "draw run");
    Ok(Some(DrawReport {
        entrants,
        admitted,
        cursor,
        recorded,
    }))
}

/// `lua/draw_open.lua` until the draw is open: waits for the Redis clock to reach the start,
/// restores or reconciles the sale first when Redis asks for it.
async fn open(core: &Core, voucher: VoucherId) -> Result<(i64, i64), DrawError> {
    let mut redis = core.redis.clone();
    let mut repaired = false;
    loop {
        match scripts::draw_open(&mut redis, &core.keys, voucher).await? {
            DrawOpen::Open { cursor, entrants } => return Ok((cursor, entrants)),
            DrawOpen::NotYet { ms } => {
                let nap = u64::try_from(ms).unwrap_or(0).clamp(1, 1_000);
                tokio::time::sleep(Duration::from_millis(nap)).await;
            }
            DrawOpen::NotADraw => return Err(DrawError::NotADraw),
            DrawOpen::NotLoaded | DrawOpen::Unreconciled if repaired => {
                return Err(Backend::Unreconciled.into())
            }
            DrawOpen::NotLoaded => {
                let v = store::vouchers::get(&core.db, voucher)
                    .await?
                    .ok_or(DrawError::NotFound)?;
                catalog::preload(core, &v).await?;
                repaired = true;
            }
            DrawOpen::Unreconciled => {
                catalog::reconcile(core, voucher).await?;
                repaired = true;
            }
        }
    }
}

/// Admits `ranking[cursor..]` in slices while units are left. Returns the cursor reached and
/// how many orders this call admitted.
async fn admit_from(
    core: &Core,
    voucher: VoucherId,
    ranking: &[UserId],
    mut cursor: i64,
) -> Result<(i64, i64), DrawError> {
    let mut redis = core.redis.clone();
    let mut admitted = 0;
    loop {
        let from = usize::try_from(cursor).unwrap_or(usize::MAX);
        let Some(rest) = ranking.get(from..).filter(|r| !r.is_empty()) else {
            return Ok((cursor, admitted));
        };
        let slice = rest.get(..SLICE.min(rest.len())).unwrap_or(rest);
        match scripts::draw_admit(&mut redis, &core.keys, voucher, cursor, slice).await? {
            DrawAdmit::Advanced {
                cursor: reached,
                stock,
                admitted: n,
            } => {
                admitted += n;
                cursor = reached;
                if stock <= 0 {
                    return Ok((cursor, admitted));
                }
            }
            // Another instance moved it (a top-up's advance): continue from there.
            DrawAdmit::Moved { cursor: theirs } => cursor = theirs,
            DrawAdmit::Ended => return Ok((cursor, admitted)),
            DrawAdmit::IdsExhausted { cursor: reached } => {
                tracing::error!(%voucher, cursor = reached, "order IDs exhausted during a draw");
                return Ok((reached, admitted));
            }
            DrawAdmit::NotOpened | DrawAdmit::NotLoaded | DrawAdmit::Unreconciled => {
                return Err(Backend::Unreconciled.into())
            }
        }
    }
}

/// Gives units left on a drawn sale to its next entrants by rank (after a winner's order was
/// cancelled or expired, or an admin added units), reading the ranking from PostgreSQL. Does
/// nothing for a sale whose ranking was exhausted or is not recorded yet (the draw's own run
/// admits then). Returns the orders admitted; safe on several instances at once (the cursor
/// decides).
pub async fn advance(core: &Core, voucher: VoucherId) -> Result<i64, DrawError> {
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let mut admitted = 0;
    loop {
        let ((cursor, entrants), stock): ((Option<i64>, Option<i64>), Option<i64>) = redis::pipe()
            .hmget(&keys.sale, &["draw_cursor", "draw_entrants"])
            .get(&keys.stock)
            .query_async(&mut redis)
            .await?;
        let (Some(cursor), Some(entrants), Some(stock)) = (cursor, entrants, stock) else {
            return Ok(admitted);
        };
        if cursor >= entrants || stock <= 0 {
            return Ok(admitted);
        }
        let n = stock.clamp(1, i64::try_from(SLICE).unwrap_or(i64::MAX));
        let next = store::draws::ranks(&core.db, voucher, cursor, n).await?;
        if next.is_empty() {
            return Ok(admitted);
        }
        match scripts::draw_admit(&mut redis, &core.keys, voucher, cursor, &next).await? {
            DrawAdmit::Advanced { admitted: n, .. } => {
                admitted += n;
                if n > 0 {
                    tracing::info!(%voucher, admitted = n, "units went down the draw's ranking");
                }
            }
            DrawAdmit::Moved { .. } => {}
            DrawAdmit::Ended | DrawAdmit::IdsExhausted { .. } => return Ok(admitted),
            DrawAdmit::NotOpened | DrawAdmit::NotLoaded | DrawAdmit::Unreconciled => {
                return Ok(admitted)
            }
        }
    }
}
