//! [`run`]: a draw sale's draw at its start.
//!
//! Under the lock `draw:{voucher}` (one instance at a time; any instance may run it; a short
//! lease renewed while held, so an instance that dies mid-draw holds the rest up for seconds):
//! 1. Wait for the Redis clock to reach the start (`lua/enter.lua` refuses entries from then).
//! 2. Close the entry log in PostgreSQL and commit its Merkle root (after the inserts in
//!    flight; a log closed before answers as it closed). Redis's duplicate check gets back any
//!    entrant it lost ([`catalog::put_entries`]).
//! 3. Open the draw in Redis with the log's count (`lua/draw_open.lua`: buys stay refused).
//! 4. Wait for the beacon's round, verified (none configured: no randomness); derive the seed
//!    and rank the log's leaves by their keys (`domain::fair`).
//! 5. `lua/draw_admit.lua` admits the ranking from its cursor, a slice per call, while units
//!    are left: each winner's order takes the buy's path (ID, stream, the order writer).
//! 6. Record the ranking, the round and the seed in PostgreSQL in one transaction: the winners
//!    are the first `min(stock, entrants)` ranks (a rank reached past them took a unit back
//!    while the draw ran: a move), fewer only when the sale's end stopped the admissions (the
//!    record is then dated at its end or later, as a verifier checks).
//!
//! A crash anywhere leaves the draw unrecorded and the next attempt resumes: the log stays
//! closed with its root, the same round gives the same seed and ranking, and the cursor (moved
//! by the script in the same step as its admissions) skips every rank already reached. Whatever
//! Redis lost, the ranking is of the log: it never falls back to first come with entrants lost.

use std::{collections::HashMap, time::Duration};

use chrono::{DateTime, Utc};

use crate::{
    catalog::{self, Staged},
    domain::{fair, UserId, VoucherId},
    infra::{
        backend::Backend,
        scripts::{self, DrawAdmit, DrawOpen},
        store::{self, draw_log::Closed},
    },
    Core,
};

use super::{draw_sale, BeaconError, DrawError};

/// Entrants sent per `draw_admit.lua` call: a call takes about a millisecond per hundred
/// admissions, so other commands wait at most some milliseconds behind one.
pub(super) const SLICE: usize = 1_000;

/// How often a round not yet emitted, or a relay that failed, is asked again.
const BEACON_RETRY: Duration = Duration::from_millis(500);

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
/// the draw's lock, or it was recorded before. Waits for the Redis clock to reach the start,
/// then for the beacon's round.
pub async fn run(core: &Core, voucher: VoucherId) -> Result<Option<DrawReport>, DrawError> {
    let (sale, committed) = draw_sale(core, voucher).await?;
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
    wait_for_start(core, voucher).await?;
    let closed = close(core, voucher).await?;
    // The outside witness, asked at once; the draws job asks again while the round is ahead.
    if let Err(e) = super::witness::witness(core, voucher, &closed.root, closed.round).await {
        tracing::warn!(%voucher, error = %e, "the draw's list is not timestamped yet");
    }
    let entrants = i64::try_from(closed.leaves.len()).unwrap_or(i64::MAX);
    // The log, read once: Redis's duplicate check gets back whatever it lost, and each leaf
    // finds its shopper.
    let logged = store::draw_log::entrants(&core.db, voucher).await?;
    catalog::put_entries(core, voucher, &logged).await?;
    let cursor = open(core, voucher, entrants).await?;
    let randomness = randomness(core, voucher, closed.round).await?;
    let seed = fair::draw_seed(
        voucher.get(),
        committed.seed.expose(),
        &closed.root,
        &randomness,
    );
    let users: HashMap<fair::Hash, UserId> = logged.into_iter().map(|(u, l)| (l, u)).collect();
    let ranking: Vec<(UserId, fair::Hash, fair::Hash)> = fair::rank(&seed, &closed.leaves)
        .into_iter()
        .filter_map(|(leaf, key)| users.get(&leaf).map(|u| (*u, leaf, key)))
        .collect();
    if ranking.len() != closed.leaves.len() {
        // Every leaf was read from the log the root was made of: a missing one means the log
        // changed under a closed draw. Never rank a set other than the committed one.
        return Err(Backend::unknown_reply("draw log", &[entrants]).into());
    }
    let order: Vec<UserId> = ranking.iter().map(|(u, _, _)| *u).collect();
    let (cursor, admitted, ended) = admit_from(core, voucher, &order, cursor).await?;
    let stock = drawn_stock(core, voucher).await?;
    let recorded = store::draws::record(
        &core.db,
        voucher,
        &store::draws::Drawn {
            ranking: &ranking,
            randomness: &randomness,
            seed,
            stock,
            winners: winners(cursor, stock, entrants),
            not_before: ended.then(|| sale.window.ends_at()),
        },
    )
    .await?;
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

/// The draw's own winners: the first `min(stock, entrants)` ranks (`domain::fair`'s rule), or
/// the ranks reached when admission stopped before them (the sale ended). Ranks the draw reached
/// past them took units that came back while it ran (a winner's order cancelled or failed, an
/// admin's top-up during the wait for the round): those are moves, published as such, as they
/// would be had the unit come back a moment later.
fn winners(cursor: i64, stock: i64, entrants: i64) -> i64 {
    cursor.min(stock.max(0).min(entrants))
}

/// Waits until the Redis clock reaches the sale's start (or the draw was opened before),
/// restoring or reconciling the sale first when Redis asks for it.
async fn wait_for_start(core: &Core, voucher: VoucherId) -> Result<(), DrawError> {
    loop {
        let state = catalog::with_sale_staged::<DrawError, _, _, _>(
            core,
            voucher,
            |o| match o {
                DrawOpen::NotLoaded => Staged::NotLoaded,
                DrawOpen::Unreconciled => Staged::Unreconciled,
                _ => Staged::Ready,
            },
            || async {
                let mut redis = core.redis.clone();
                scripts::draw_open(&mut redis, &core.keys, voucher, None).await
            },
        )
        .await?;
        match state {
            DrawOpen::Open { .. } | DrawOpen::Due => return Ok(()),
            DrawOpen::NotYet { ms } => {
                let nap = u64::try_from(ms).unwrap_or(0).clamp(1, 1_000);
                tokio::time::sleep(Duration::from_millis(nap)).await;
            }
            DrawOpen::NotADraw => return Err(DrawError::NotADraw),
            DrawOpen::NotLoaded | DrawOpen::Unreconciled => {
                return Err(Backend::Unreconciled.into())
            }
        }
    }
}

/// Closes the entry log. A close after the round named at creation was emitted (no instance
/// was there at the start) names the first round the list is still committed before.
async fn close(core: &Core, voucher: VoucherId) -> Result<Closed, DrawError> {
    let timing = match &core.beacon {
        Some(beacon) => Some(beacon.timing().await?),
        None => None,
    };
    let margin = chrono::Duration::from_std(core.config.draw.commit_margin)
        .unwrap_or(chrono::Duration::seconds(5));
    let closed = store::draw_log::close(&core.db, voucher, |now: DateTime<Utc>, round| {
        let chain = timing?.chain();
        chain
            .emitted_by(round, now)
            .then(|| chain.round_after_close(now, margin))
    })
    .await?;
    tracing::info!(
        %voucher,
        entrants = closed.leaves.len(),
        root = %hex::encode(closed.root),
        round = ?closed.round,
        "draw entries closed and committed"
    );
    Ok(closed)
}

/// Opens the draw in Redis with the log's `entrants`; returns the cursor (0, or where a run
/// before this one stopped).
async fn open(core: &Core, voucher: VoucherId, entrants: i64) -> Result<i64, DrawError> {
    let mut redis = core.redis.clone();
    match scripts::draw_open(&mut redis, &core.keys, voucher, Some(entrants)).await? {
        DrawOpen::Open {
            cursor,
            entrants: theirs,
        } if theirs == entrants => Ok(cursor),
        // Opened before with another count: Redis's state is not this log's (a restore from
        // an older copy). Refuse; the next attempt reads it again.
        DrawOpen::Open {
            entrants: theirs, ..
        } => Err(Backend::unknown_reply("draw_open", &[theirs, entrants]).into()),
        DrawOpen::NotADraw => Err(DrawError::NotADraw),
        _ => Err(Backend::Unreconciled.into()),
    }
}

/// The beacon's round `round`, verified, waited for; empty for a sale that named no round. A
/// relay that fails or a round that does not verify is logged and asked again: the draw never
/// runs without it, nor on an instance configured for another chain (or none).
async fn randomness(
    core: &Core,
    voucher: VoucherId,
    round: Option<u64>,
) -> Result<Vec<u8>, DrawError> {
    let Some(round) = round else {
        return Ok(Vec::new());
    };
    let named = store::draws::get(&core.db, voucher)
        .await?
        .and_then(|r| r.beacon)
        .map(|b| b.chain_hash);
    let beacon = match &core.beacon {
        Some(b) if named.as_deref() == Some(b.settings().chain_hash.as_str()) => b,
        _ => {
            return Err(BeaconError::WrongChain(format!(
                "the sale names chain {named:?}; this instance is configured for another (or none)"
            ))
            .into())
        }
    };
    loop {
        match beacon.round(round).await {
            Ok(Some(r)) => return Ok(r.randomness.to_vec()),
            Ok(None) => {}
            Err(e) => {
                metrics::counter!("seckill_draw_beacon_failures_total").increment(1);
                tracing::error!(%voucher, round, error = %e, "the draw waits for a verified beacon round");
            }
        }
        tokio::time::sleep(BEACON_RETRY).await;
    }
}

/// The units the draw had: `draw_stock`, set when the draw opened.
async fn drawn_stock(core: &Core, voucher: VoucherId) -> Result<i64, DrawError> {
    let mut redis = core.redis.clone();
    let stock: Option<i64> = redis::cmd("HGET")
        .arg(core.keys.voucher(voucher).sale)
        .arg("draw_stock")
        .query_async(&mut redis)
        .await
        .map_err(Backend::from)?;
    Ok(stock.unwrap_or(0))
}

/// Admits `ranking[cursor..]` in slices while units are left. Returns the cursor reached, how
/// many orders this call admitted, and whether it stopped because the sale had ended.
async fn admit_from(
    core: &Core,
    voucher: VoucherId,
    ranking: &[UserId],
    mut cursor: i64,
) -> Result<(i64, i64, bool), DrawError> {
    let mut redis = core.redis.clone();
    let mut admitted = 0;
    loop {
        let from = usize::try_from(cursor).unwrap_or(usize::MAX);
        let Some(rest) = ranking.get(from..).filter(|r| !r.is_empty()) else {
            return Ok((cursor, admitted, false));
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
                    return Ok((cursor, admitted, false));
                }
            }
            // Another instance moved it (a top-up's advance): continue from there.
            DrawAdmit::Moved { cursor: theirs } => cursor = theirs,
            DrawAdmit::Ended => return Ok((cursor, admitted, true)),
            DrawAdmit::IdsExhausted { cursor: reached } => {
                tracing::error!(%voucher, cursor = reached, "order IDs exhausted during a draw");
                return Ok((reached, admitted, false));
            }
            DrawAdmit::NotOpened | DrawAdmit::NotLoaded | DrawAdmit::Unreconciled => {
                return Err(Backend::Unreconciled.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::winners;

    #[test]
    fn the_draws_winners_are_the_first_ranks_of_its_units_and_no_more() {
        assert_eq!(winners(5, 5, 20), 5, "every unit admitted");
        assert_eq!(
            winners(7, 5, 20),
            5,
            "two units came back while the draw admitted: two moves"
        );
        assert_eq!(winners(3, 5, 3), 3, "fewer entrants than units");
        assert_eq!(winners(2, 5, 20), 2, "the sale ended after two admissions");
        assert_eq!(winners(0, 5, 20), 0, "the round came after the sale's end");
        assert_eq!(winners(0, 0, 20), 0);
    }
}
