//! Vouchers: creation by admins, listing, and preloading their sale into Redis.

use std::time::Duration;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

pub mod admin;
pub mod cache;
pub mod console;

use crate::{
    auth::Admin,
    domain::{FieldErrors, NewVoucher, Shard, Voucher, VoucherDraft, VoucherId},
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

/// Why a voucher was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateVoucherError {
    #[error(transparent)]
    Invalid(#[from] FieldErrors),
    #[error("storing the voucher: {0}")]
    Backend(#[from] Backend),
    #[error("the voucher {0} is stored but not preloaded: {1}")]
    Preload(VoucherId, #[source] PreloadError),
    /// A draw sale names its beacon round at creation: the beacon must answer.
    #[error("the randomness beacon: {0}")]
    Beacon(#[source] crate::draw::BeaconError),
}

backend_error!(CreateVoucherError);

impl Unavailable for CreateVoucherError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Invalid(_) => false,
            Self::Backend(e) => e.is_unavailable(),
            Self::Preload(_, e) => e.is_unavailable(),
            Self::Beacon(_) => true,
        }
    }
}

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

/// Validates `draft`, stores the voucher and preloads its sale into Redis.
pub async fn create_voucher(
    core: &Core,
    admin: &Admin,
    draft: &VoucherDraft,
    now: DateTime<Utc>,
) -> Result<VoucherId, CreateVoucherError> {
    let created = create_checked(core, admin, draft, now).await;
    // A refused draft's title as typed, quoted and cut short: it may hold anything.
    let target = created.as_ref().map_or_else(
        |_| format!("{:?}", draft.title.chars().take(60).collect::<String>()),
        ToString::to_string,
    );
    crate::auth::audit::admin_action(admin.user(), "create voucher", target, &created);
    created
}

/// A priced voucher must cost at least what the payment provider can charge (Stripe refuses a
/// session below its minimum, so every Pay now would fail); free (0) is fine.
fn chargeable(core: &Core, new: &NewVoucher) -> Result<(), FieldErrors> {
    let currency = &core.config.payments.currency;
    match core.payments.minimum_charge(currency) {
        Some(min) if new.price_cents > 0 && new.price_cents < min => {
            let mut errors = FieldErrors::default();
            errors.push(
                "price_cents",
                format!(
                    "must be at least {} in minor units (the smallest charge the payment provider takes in {}), or 0 for a free voucher",
                    crate::domain::grouped(min),
                    currency.as_str().to_uppercase()
                ),
            );
            Err(errors)
        }
        _ => Ok(()),
    }
}

async fn create_checked(
    core: &Core,
    admin: &Admin,
    draft: &VoucherDraft,
    now: DateTime<Utc>,
) -> Result<VoucherId, CreateVoucherError> {
    let new = NewVoucher::parse(draft, now)?;
    chargeable(core, &new)?;
    let beacon = match new.opening.is_draw() {
        true => crate::draw::name_round(core, new.window.begins_at())
            .await
            .map_err(CreateVoucherError::Beacon)?,
        false => None,
    };
    let mut tx = core.db.begin().await?;
    let id = store::vouchers::insert(&mut tx, &new, admin.user()).await?;
    if new.opening.is_draw() {
        let seed = crate::draw::Seed::generate();
        store::draws::insert(
            &mut tx,
            id,
            seed.expose(),
            &seed.commitment(),
            beacon.as_ref(),
        )
        .await?;
    }
    tx.commit().await?;
    let voucher = store::vouchers::get(&core.db, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    core.known.created(id);
    changed(core, id).await;
    preload(core, &voucher)
        .await
        .map_err(|e| CreateVoucherError::Preload(id, e))?;
    tracing::info!(voucher = %id, stock = new.stock.get(), "voucher created and preloaded");
    Ok(id)
}

/// After a voucher changed here (created, ended, topped up): renderings and rows this instance
/// kept are old at once, and every other instance hears of it by pub/sub (best effort: their
/// memory expires within `SECKILL_CATALOG_CACHE_MS` if the message is lost).
pub async fn changed(core: &Core, voucher: VoucherId) {
    core.catalog_changed();
    let mut redis = core.redis.clone();
    let sent: Result<i64, _> = redis
        .publish(core.keys.catalog_channel(), voucher.get())
        .await;
    if let Err(e) = sent {
        tracing::warn!(%voucher, error = %e, "the catalog change was not announced");
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
    let _one_at_a_time = core.reconciling.lock().await;
    if check(core, voucher).await? != PreloadOutcome::MasterChanged {
        return Ok(());
    }
    let Some(v) = store::vouchers::get(&core.db, voucher).await? else {
        return Ok(());
    };
    load(core, &v, PreloadMode::Reconcile).await?;
    metrics::counter!("seckill_reconciliations_total").increment(1);
    Ok(())
}

/// Whether `voucher`'s sale was checked under its current master (`AlreadyLoaded`), was not
/// (`MasterChanged`) or is absent; writes nothing.
async fn check(core: &Core, voucher: VoucherId) -> Result<PreloadOutcome, Backend> {
    let nothing = PreloadInput {
        begins_ms: 0,
        ends_ms: 0,
        total_stock: 0,
        db_stock: 0,
        moves: &[],
        buyers: &[],
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
    let snapshot = if live && mode == PreloadMode::Load {
        light
    } else {
        store::vouchers::restore_snapshot(&core.db, voucher.id).await?
    };
    // Ensure the queue exists before the first admission can write to it.
    let created: Result<(), redis::RedisError> = redis
        .xgroup_create_mkstream(&keys.orders, ORDER_GROUP, "0")
        .await;
    if let Err(e) = created {
        if e.code() != Some("BUSYGROUP") {
            return Err(e.into());
        }
    }
    let mut outcome = run_preload(&mut redis, &keys, voucher, mode, &snapshot).await?;
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
        if voucher.opening.is_draw() {
            // Redis lost the draw's duplicate check with the sale: the log has every entry.
            crate::draw::restore_entries(core, voucher.id).await?;
        }
        crate::sale::announce_stock_back(core, voucher.id).await;
        // Redis may have lost the day's order-ID counter with the sale: never hand out an ID
        // PostgreSQL already holds.
        crate::sale::order_id::raise_past_stored(core, Shard::of_voucher(voucher.id), Utc::now())
            .await?;
    }
    Ok(outcome)
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

/// A voucher with its live Redis counts.
#[derive(Debug, Clone)]
pub struct VoucherState {
    pub voucher: Voucher,
    /// Units left to admit (Redis), or PostgreSQL's count when Redis has no sale.
    pub remaining: i64,
    /// Redis's own count, `None` when the sale is not (or no longer) preloaded.
    pub redis_stock: Option<i64>,
    /// Orders admitted and not yet written.
    pub queued: i64,
    /// Orders the worker gave up on (the voucher's dead-letter stream).
    pub dead_lettered: i64,
}

/// A voucher and the units left to admit, as the shop shows them: Redis's stock as this
/// instance last read it (see [`cache`]), PostgreSQL's when Redis has no sale.
#[derive(Debug, Clone)]
pub struct VoucherNow {
    pub voucher: Voucher,
    pub remaining: i64,
}

/// Newest vouchers first, with what is left of each: from this instance's memory when it has
/// read them lately (no PostgreSQL, no Redis).
pub async fn list(core: &Core, limit: i64) -> Result<Vec<VoucherNow>, Backend> {
    let vouchers = core.catalog.list(core, limit).await?;
    with_remaining(core, vouchers.iter().cloned().collect()).await
}

/// One voucher with what is left of it (from memory, like [`list`]).
pub async fn get(core: &Core, id: VoucherId) -> Result<Option<VoucherNow>, Backend> {
    if !core.known.may_exist(&core.db, id).await? {
        return Ok(None);
    }
    let Some(v) = core.catalog.get(core, id).await? else {
        return Ok(None);
    };
    Ok(with_remaining(core, vec![v]).await?.pop())
}

/// Newest vouchers first, with Redis's counts read now (the console: where each unit is).
pub async fn list_counted(core: &Core, limit: i64) -> Result<Vec<VoucherState>, Backend> {
    let vouchers = core.catalog.list(core, limit).await?;
    with_live_counts(core, vouchers.iter().cloned().collect()).await
}

/// The listing's vouchers (at most `limit`, newest first), without their counts: from this
/// instance's memory when it has read them lately.
pub async fn listed(core: &Core, limit: i64) -> Result<std::sync::Arc<Vec<Voucher>>, Backend> {
    Ok(core.catalog.list(core, limit).await?)
}

/// `vouchers` with Redis's counts read now.
pub async fn counted(core: &Core, vouchers: Vec<Voucher>) -> Result<Vec<VoucherState>, Backend> {
    with_live_counts(core, vouchers).await
}

async fn with_remaining(core: &Core, vouchers: Vec<Voucher>) -> Result<Vec<VoucherNow>, Backend> {
    let ids: Vec<VoucherId> = vouchers.iter().map(|v| v.id).collect();
    let stock = core.catalog.stock(core, &ids).await?;
    Ok(vouchers
        .into_iter()
        .zip(stock)
        .map(|(voucher, stock)| VoucherNow {
            remaining: stock.unwrap_or(voucher.db_stock).max(0),
            voucher,
        })
        .collect())
}

/// A sale as Redis has it: what a sale page polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSale {
    /// Units left to admit.
    pub remaining: i64,
    /// When admissions stop (an admin may have ended the sale early).
    pub ends_at: DateTime<Utc>,
    /// A draw sale's entrants so far (0 for a first-come sale).
    pub entrants: i64,
}

/// `id`'s stock left, end and entrants, read from Redis alone (one round trip, one slot). `None` when
/// the sale is not preloaded.
pub async fn live(core: &Core, id: VoucherId) -> Result<Option<LiveSale>, Backend> {
    let mut redis = core.redis.clone();
    let k = core.keys.voucher(id);
    let (stock, ends_ms, entrants): (Option<i64>, Option<i64>, i64) = redis::pipe()
        .get(&k.stock)
        .hget(&k.sale, "ends_ms")
        .scard(&k.entries)
        .query_async(&mut redis)
        .await?;
    Ok(stock.zip(ends_ms).and_then(|(s, ms)| {
        Some(LiveSale {
            remaining: s.max(0),
            ends_at: DateTime::from_timestamp_millis(ms)?,
            entrants,
        })
    }))
}

/// The titles of the vouchers among `ids` that exist (to label lists of orders).
pub async fn titles(
    core: &Core,
    ids: &[VoucherId],
) -> Result<std::collections::HashMap<VoucherId, String>, Backend> {
    Ok(store::vouchers::titles(&core.db, ids).await?)
}

async fn with_live_counts(
    core: &Core,
    vouchers: Vec<Voucher>,
) -> Result<Vec<VoucherState>, Backend> {
    if vouchers.is_empty() {
        return Ok(Vec::new());
    }
    // One pipeline per voucher (its keys share a slot), all in flight at once: a pipeline
    // across vouchers would span slots on a Redis Cluster.
    let counts = futures::future::try_join_all(vouchers.iter().map(|v| {
        let k = core.keys.voucher(v.id);
        let mut redis = core.redis.clone();
        async move {
            redis::pipe()
                .get(&k.stock)
                .hlen(&k.queued)
                .xlen(&k.dead)
                .query_async::<(Option<i64>, i64, i64)>(&mut redis)
                .await
        }
    }))
    .await?;
    Ok(vouchers
        .into_iter()
        .zip(counts)
        .map(|(voucher, (stock, queued, dead_lettered))| VoucherState {
            remaining: stock.unwrap_or(voucher.db_stock).max(0),
            redis_stock: stock,
            queued,
            dead_lettered,
            voucher,
        })
        .collect())
}
