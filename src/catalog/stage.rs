//! A sale's state in Redis: loaded (preloaded at creation and start-up), restored after Redis
//! lost it, reconciled after its master changed, always rebuilt from PostgreSQL under the
//! voucher's lock; and [`with_sale_staged`], the one place a sale's script that found its sale
//! missing or unchecked gets it repaired and runs again.

use std::time::Duration;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use crate::{
    domain::{Shard, Voucher, VoucherId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        keys::ORDER_GROUP,
        lock::LockError,
        scripts::{self, PreloadInput, PreloadMode, PreloadOutcome},
        store,
    },
    Core,
};

/// How long a preload waits for another instance preloading the same voucher.
const PRELOAD_LOCK_WAIT: Duration = Duration::from_secs(10);

/// Why a preload did not happen.
#[derive(Debug, thiserror::Error)]
pub enum PreloadError {
    #[error("lock: {0}")]
    Lock(#[from] LockError),
    #[error("another instance kept the preload lock of voucher {0}")]
    Busy(VoucherId),
    #[error("a newer preload of voucher {0} holds the fence; this one stood down")]
    Fenced(VoucherId),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(PreloadError);

impl PreloadError {
    /// As a store error, for callers that only retry: another instance holding the sale's lock
    /// means "not yet", like a store out of reach.
    pub fn into_backend(self) -> Backend {
        match self {
            Self::Backend(e) => e,
            Self::Lock(_) | Self::Busy(_) | Self::Fenced(_) => Backend::Unreconciled,
        }
    }
}

impl Unavailable for PreloadError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Backend(e) => e.is_unavailable(),
            // Another instance is preloading the same voucher: this one's work is done there.
            Self::Busy(_) | Self::Fenced(_) => false,
        }
    }
}

/// Loads `voucher`'s sale into Redis, or restores it after Redis lost it (see
/// `lua/preload.lua`); a sale not checked under its current Redis master is reconciled. One
/// instance at a time per voucher: the preload runs under the voucher's lock, and its fencing
/// token is checked by PostgreSQL before Redis is touched.
pub async fn preload(core: &Core, voucher: &Voucher) -> Result<PreloadOutcome, PreloadError> {
    load(core, voucher, PreloadMode::Load).await
}

/// Reconciles `voucher`'s sale after its Redis master changed (a failover, a restart: see
/// `lua/master.lua`, design.md decision 32): rebuilt from PostgreSQL and the orders Redis still
/// queues, under the voucher's lock, like a restore. Does nothing for a sale already checked
/// under this master (one `preload.lua` call that writes nothing) or absent from Redis (the
/// next buy restores it). The admissions, the worker's settling and the stock moves of the sale
/// wait for it (their scripts refuse an unchecked sale); one reconciliation at a time per
/// instance, so the shoppers of one refused batch wait for one rebuild, not one each.
pub async fn reconcile(core: &Core, voucher: VoucherId) -> Result<(), PreloadError> {
    if reconcile_unchecked(core, voucher).await? {
        metrics::counter!("seckill_reconciliations_total").increment(1);
    }
    Ok(())
}

/// [`reconcile`] after an admin's edit, which leaves its sale unchecked (`lua/revise.lua`):
/// not counted in `seckill_reconciliations_total`, which says how often a Redis master changed.
pub(super) async fn reconcile_edited(core: &Core, voucher: VoucherId) -> Result<(), PreloadError> {
    reconcile_unchecked(core, voucher).await.map(|_| ())
}

/// Reconciles `voucher`'s sale when it is unchecked; whether it was.
async fn reconcile_unchecked(core: &Core, voucher: VoucherId) -> Result<bool, PreloadError> {
    let _one_at_a_time = core.reconciling.lock().await;
    if check(core, voucher).await? != PreloadOutcome::MasterChanged {
        return Ok(false);
    }
    let Some(v) = store::vouchers::get(&core.db, voucher).await? else {
        return Ok(false);
    };
    load(core, &v, PreloadMode::Reconcile).await?;
    Ok(true)
}

/// Whether `voucher`'s sale was checked under its current master (`AlreadyLoaded`), was not
/// (`MasterChanged`) or is absent; writes nothing.
pub async fn check(core: &Core, voucher: VoucherId) -> Result<PreloadOutcome, Backend> {
    let nothing = PreloadInput {
        begins_ms: 0,
        ends_ms: 0,
        total_stock: 0,
        db_stock: 0,
        moves: &[],
        buyers: &[],
        cancelled: &[],
        entries_ms: None,
        draw: None,
    };
    let mut redis = core.redis.clone();
    scripts::preload(
        &mut redis,
        &core.keys.voucher(voucher),
        PreloadMode::Check,
        &nothing,
    )
    .await
}

/// `preload.lua` in `mode` under the voucher's lock, with PostgreSQL's snapshot whenever the
/// script may rebuild; a `Load` that finds the sale unchecked under this master reconciles it
/// under the same lock.
async fn load(
    core: &Core,
    voucher: &Voucher,
    mode: PreloadMode,
) -> Result<PreloadOutcome, PreloadError> {
    let name = format!("preload:{}", voucher.id);
    let guard = core
        .locks
        .try_acquire(&name, PRELOAD_LOCK_WAIT)
        .await?
        .ok_or(PreloadError::Busy(voucher.id))?;
    if !store::vouchers::record_preload(&core.db, voucher.id, guard.fence()).await? {
        return Err(PreloadError::Fenced(voucher.id));
    }
    // Read again under the lock: an admin's edit or end committed since the caller read it
    // must not be undone by writing the older window.
    let fresh = store::vouchers::get(&core.db, voucher.id).await?;
    let voucher = fresh.as_ref().unwrap_or(voucher);
    if mode == PreloadMode::Reconcile {
        let now = check(core, voucher.id).await?;
        if now != PreloadOutcome::MasterChanged {
            // Another instance reconciled it while this one waited for the lock.
            guard.finish("preload").await;
            return Ok(now);
        }
    }
    let keys = core.keys.voucher(voucher.id);
    let mut redis = core.redis.clone();
    // PostgreSQL's stock, moves and buyers are only read when the script may rebuild (a first
    // load, a restore, a reconciliation), in one snapshot.
    let live: bool = redis.exists(&keys.stock).await?;
    let light = store::vouchers::RestoreSnapshot {
        db_stock: voucher.db_stock,
        total_stock: voucher.total_stock(),
        ..Default::default()
    };
    // With the light snapshot the script may only refresh: a stock that vanished since the
    // check (Redis restarted empty) is not rebuilt from it (no buyers, no moves: an oversell),
    // but answered `Absent`, and rebuilt below from the full one.
    let (sent, snapshot) = if live && mode == PreloadMode::Load {
        (PreloadMode::Refresh, light)
    } else {
        (
            mode,
            store::vouchers::restore_snapshot(&core.db, voucher.id).await?,
        )
    };
    ensure_queue(&mut redis, &keys.orders).await?;
    // A lease that lapsed while this instance waited on the stores (another may have taken
    // the lock and changed the sale since): stand down rather than write an older window.
    if guard.is_lost() {
        return Err(PreloadError::Fenced(voucher.id));
    }
    // Registered before the sale can admit, as well as after: registered after only, a process
    // killed between the two would leave a sale that admits into a stream no worker reads;
    // before only, a sweep retiring the registration of a sale not in Redis yet would.
    let _: () = redis
        .sadd(core.keys.preloaded_vouchers(), voucher.id.get())
        .await?;
    let mut outcome = run_preload(&mut redis, &keys, voucher, sent, &snapshot).await?;
    if outcome == PreloadOutcome::Absent {
        let full = store::vouchers::restore_snapshot(&core.db, voucher.id).await?;
        outcome = run_preload(&mut redis, &keys, voucher, PreloadMode::Load, &full).await?;
    }
    if outcome == PreloadOutcome::MasterChanged {
        tracing::warn!(voucher = %voucher.id, "the sale's Redis master changed: reconciling it");
        let full = store::vouchers::restore_snapshot(&core.db, voucher.id).await?;
        outcome = run_preload(&mut redis, &keys, voucher, PreloadMode::Reconcile, &full).await?;
    }
    let _: () = redis
        .sadd(core.keys.preloaded_vouchers(), voucher.id.get())
        .await?;
    guard.finish("preload").await;
    if let PreloadOutcome::Rebuilt { stock } = outcome {
        tracing::info!(voucher = %voucher.id, stock, ?mode, "sale state rebuilt in Redis");
        after_rebuild(core, voucher).await?;
    }
    Ok(outcome)
}

/// Creates the sale's order queue and its consumer group before the first admission can write
/// to it (already there: nothing to do).
async fn ensure_queue(
    redis: &mut crate::infra::redis_conn::Redis,
    queue: &str,
) -> Result<(), PreloadError> {
    let created: Result<(), redis::RedisError> =
        redis.xgroup_create_mkstream(queue, ORDER_GROUP, "0").await;
    match created {
        Err(e) if e.code() != Some("BUSYGROUP") => Err(e.into()),
        _ => Ok(()),
    }
}

/// What Redis lost with a sale it rebuilt: a draw's duplicate check (the log has every entry),
/// the pages' word that units are back, and the day's order-ID counter (never hand out an ID
/// PostgreSQL already holds).
async fn after_rebuild(core: &Core, voucher: &Voucher) -> Result<(), PreloadError> {
    if voucher.opening.is_draw() {
        restore_entries(core, voucher.id).await?;
    }
    crate::sale::announce_stock_back(core, voucher.id).await;
    crate::sale::order_id::raise_past_stored(core, Shard::of_voucher(voucher.id), Utc::now())
        .await?;
    Ok(())
}

/// One `preload.lua` call for `voucher` with PostgreSQL's `snapshot`.
async fn run_preload(
    redis: &mut crate::infra::redis_conn::Redis,
    keys: &crate::infra::keys::VoucherKeys,
    voucher: &Voucher,
    mode: PreloadMode,
    snapshot: &store::vouchers::RestoreSnapshot,
) -> Result<PreloadOutcome, Backend> {
    let input = PreloadInput {
        begins_ms: voucher.window.begins_at().timestamp_millis(),
        ends_ms: voucher.window.ends_at().timestamp_millis(),
        total_stock: snapshot.total_stock,
        db_stock: snapshot.db_stock,
        moves: &snapshot.moves,
        buyers: &snapshot.buyers,
        cancelled: &snapshot.cancelled,
        entries_ms: voucher
            .opening
            .entries_open_at()
            .map(|t| t.timestamp_millis()),
        draw: snapshot.draw,
    };
    scripts::preload(redis, keys, mode, &input).await
}

/// Preloads every voucher whose sale has not ended: at start-up, and on demand. Returns how
/// many were checked; a voucher that fails is logged and skipped.
pub async fn preload_live(core: &Core, now: DateTime<Utc>) -> Result<usize, sqlx::Error> {
    let vouchers = store::vouchers::live_since(&core.db, now).await?;
    for v in &vouchers {
        if let Err(e) = preload(core, v).await {
            tracing::error!(voucher = %v.id, error = %e, "preload failed");
        }
    }
    Ok(vouchers.len())
}

/// What a sale's script answered about the sale itself, before deciding anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staged {
    /// The script decided: nothing to repair.
    Ready,
    /// Redis has no sale for the voucher (never preloaded, or Redis lost it).
    NotLoaded,
    /// The sale was not checked under this Redis master (a failover, a restart).
    Unreconciled,
}

/// Runs `call`, a sale's script; when `staged` reads its answer as `NotLoaded` or
/// `Unreconciled`, restores or reconciles the sale from PostgreSQL once and runs it again (the
/// one place this repair is written: buys, entries, a draw's start, stock moves and the worker's
/// settling all go through here). A voucher that does not exist, or another instance holding the
/// sale's lock, answers as it stands: the first answer, or `Backend::Unreconciled` (try again).
/// `E` is the caller's error: name it (`with_sale_staged::<BuyError, _, _, _>`).
pub async fn with_sale_staged<E, T, F, Fut>(
    core: &Core,
    voucher: VoucherId,
    staged: impl Fn(&T) -> Staged,
    mut call: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Backend>>,
    E: From<PreloadError> + From<Backend>,
{
    let answer = call().await?;
    match staged(&answer) {
        Staged::Ready => return Ok(answer),
        Staged::NotLoaded => {
            let Some(v) = store::vouchers::get(&core.db, voucher)
                .await
                .map_err(Backend::from)?
            else {
                return Ok(answer);
            };
            preload(core, &v).await?;
        }
        Staged::Unreconciled => match reconcile(core, voucher).await {
            Ok(()) => {}
            // Another instance is rebuilding the sale: not yet, like a store out of reach.
            Err(PreloadError::Busy(_) | PreloadError::Fenced(_)) => {
                return Err(Backend::Unreconciled.into())
            }
            Err(e) => return Err(e.into()),
        },
    }
    Ok(call().await?)
}

/// Puts every entrant of `voucher`'s log back into Redis's duplicate check (after Redis lost
/// the sale, or at the draw when Redis counts fewer than the log). Returns how many were
/// missing; each one is counted in `seckill_draw_entries_restored_total`.
pub async fn restore_entries(core: &Core, voucher: VoucherId) -> Result<i64, Backend> {
    let entrants = store::draw_log::entrants(&core.db, voucher).await?;
    put_entries(core, voucher, &entrants).await
}

/// [`restore_entries`] with the log already read (the draw reads it once for both).
pub async fn put_entries(
    core: &Core,
    voucher: VoucherId,
    entrants: &[(crate::domain::UserId, crate::domain::fair::Hash)],
) -> Result<i64, Backend> {
    let key = core.keys.voucher(voucher).entries;
    let mut redis = core.redis.clone();
    let mut added = 0;
    for chunk in entrants.chunks(5_000) {
        let ids: Vec<i64> = chunk.iter().map(|(u, _)| u.get()).collect();
        let n: i64 = redis.sadd(&key, ids).await?;
        added += n;
    }
    if added > 0 {
        metrics::counter!("seckill_draw_entries_restored_total")
            .increment(u64::try_from(added).unwrap_or(0));
        tracing::warn!(%voucher, missing = added, "Redis had lost draw entries: restored from the log");
    }
    Ok(added)
}
