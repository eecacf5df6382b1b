//! The housekeeping job. Every instance offers to run it every `SECKILL_SWEEP_MS`; the lock
//! `job:sweep` lets one instance at a time do it, and its fencing token is recorded in
//! PostgreSQL (`job_runs`), so an instance that paused past its lease cannot record a stale run.
//!
//! One pass:
//! 1. **Restore**: every voucher whose sale has not ended but whose Redis state is missing
//!    (Redis restarted without its data, a key was evicted) is preloaded again from PostgreSQL
//!    (see [`catalog::preload`]: remaining = PostgreSQL stock − orders still queued), and every
//!    one left unchecked (its Redis master changed, or an admin's edit died before reconciling
//!    it) is reconciled, whether or not anyone buys.
//! 2. **Retire**: a sale that ended more than `SECKILL_RETIRE_AFTER_MS` ago and has nothing left
//!    to write has its Redis state deleted and leaves the registry, so the worker stops reading
//!    its stream (`lua/retire.lua`). Its orders live on in PostgreSQL; dead letters are kept.
//! 3. **Payments** ([`deadline`]): open payments whose webhook may be lost are looked up, open
//!    payments of orders past their deadline are expired at the provider (a payment completed
//!    first wins), refunds owed are made.
//! 4. **Deadline**: orders not paid by their `pay_by` (and no payment open) are cancelled (in
//!    batches, each transaction checking this run's fencing token) and their units go back on
//!    sale.
//! 5. **Pending moves**: stock moves whose process died between PostgreSQL and Redis (a
//!    cancellation, a top-up) are applied ([`restock`]).
//! 6. **Ends**: a sale an admin ended whose Redis window still runs (the process died between
//!    the two stores) is ended in Redis too.

use std::time::Duration;

use chrono::Utc;
use redis::AsyncCommands;
use tokio_util::sync::CancellationToken;

use crate::{
    catalog,
    domain::VoucherId,
    infra::{
        backend::{backend_error, Backend, Unavailable},
        lock::LockError,
        scripts::{self, PreloadOutcome, Retirement},
        store,
    },
    orders::{
        payment_sweep::{self, PaymentsReport},
        restock::{self, RestockError},
    },
    Core,
};

/// The lock and `job_runs` name of this job.
pub const JOB: &str = "sweep";

/// A sweep failed; the next one tries again.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("lock: {0}")]
    Lock(#[from] LockError),
    #[error(transparent)]
    Backend(#[from] Backend),
    #[error("{0}")]
    Restock(#[from] RestockError),
    /// The pass's report could not be written as JSON for `job_runs`.
    #[error("recording the report: {0}")]
    Report(#[source] serde_json::Error),
}

backend_error!(SweepError);

impl Unavailable for SweepError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Backend(e) => e.is_unavailable(),
            Self::Restock(e) => e.is_unavailable(),
            Self::Report(_) => false,
        }
    }
}

/// What one pass did; recorded as JSON in `job_runs.report`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SweepReport {
    /// Live vouchers whose Redis state was missing and was preloaded again.
    pub restored: Vec<VoucherId>,
    /// Finished sales whose Redis state was deleted.
    pub retired: Vec<VoucherId>,
    /// Finished sales past the grace period that still have orders to write.
    pub draining: usize,
    /// What the payment steps did.
    pub payments: PaymentsReport,
    /// Orders cancelled because their payment deadline passed.
    pub expired: usize,
    /// Pending stock moves applied (left over by a process that died).
    pub moves_applied: usize,
    /// Sales ended in PostgreSQL whose Redis window was ended now.
    pub ends_repaired: Vec<VoucherId>,
}

/// Whether this instance ran the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepOutcome {
    Ran(SweepReport),
    /// Another instance holds the job's lock.
    Busy,
    /// A run with a newer fencing token was already recorded; this one stood down.
    Fenced,
}

/// One pass, if no other instance is running one.
pub async fn sweep_once(core: &Core) -> Result<SweepOutcome, SweepError> {
    let Some(guard) = core
        .locks
        .try_acquire(&format!("job:{JOB}"), Duration::ZERO)
        .await?
    else {
        return Ok(SweepOutcome::Busy);
    };
    let fence = guard.fence();
    if !store::jobs::begin(&core.db, JOB, fence, &core.config.instance_id).await? {
        guard.finish("the sweep (fenced)").await;
        return Ok(SweepOutcome::Fenced);
    }
    let report = sweep(core, fence).await;
    let recorded = match &report {
        Ok(r) => record(core, fence, r).await,
        Err(_) => Ok(()),
    };
    guard.finish("the sweep").await;
    let report = report?;
    recorded?;
    Ok(SweepOutcome::Ran(report))
}

/// Records a finished pass in `job_runs`, under its fencing token.
async fn record(core: &Core, fence: i64, report: &SweepReport) -> Result<(), SweepError> {
    let json = serde_json::to_string(report).map_err(SweepError::Report)?;
    store::jobs::finish(&core.db, JOB, fence, &json).await?;
    Ok(())
}

/// Orders the deadline pass cancels per transaction.
const EXPIRE_BATCH: i64 = 500;
/// The payment steps' budget in a pass is half the sweep's period, at least this.
const PAYMENTS_BUDGET_MIN: Duration = Duration::from_secs(2);
/// Pending stock moves one pass applies at most.
const MOVES_PER_PASS: i64 = 5_000;

async fn sweep(core: &Core, fence: i64) -> Result<SweepReport, SweepError> {
    // The sales' Redis state first. A step Redis cannot serve (a node out of reach, a shard
    // failing over) is said and left to the next pass, and so is each sale it cannot serve:
    // the deadlines and the payments below are PostgreSQL's and the provider's, and wait for
    // no sale's Redis.
    let restored = next_pass_if_not("restoring lost sales", restore_lost(core).await);
    let (retired, draining) =
        next_pass_if_not("retiring finished sales", retire_finished(core).await);
    // Due orders with no open payment go back on sale first: nothing of theirs waits for the
    // provider. Then the payment steps, within a budget (each of their writes is one
    // transaction, so one cut short loses nothing: the next pass goes on), and the orders
    // whose payments they closed.
    let expired = expire_unpaid(core, fence).await?;
    let budget = (core.config.sweep.every / 2).max(PAYMENTS_BUDGET_MIN);
    let payments = match tokio::time::timeout(budget, payment_sweep::run(core)).await {
        Ok(report) => report?,
        Err(_) => {
            tracing::warn!(
                ?budget,
                "the payment steps ran out of time (the provider is slow); the next pass goes on"
            );
            metrics::counter!("seckill_sweep_payments_over_budget_total").increment(1);
            PaymentsReport::default()
        }
    };
    let report = SweepReport {
        restored,
        retired,
        draining,
        payments,
        expired: expired + expire_unpaid(core, fence).await?,
        // Moves left pending by a process that died between the stores.
        moves_applied: next_pass_if_not(
            "applying pending stock moves",
            restock::apply_pending(core, MOVES_PER_PASS).await,
        ),
        ends_repaired: next_pass_if_not("repairing sales' ends", repair_ends(core).await),
    };
    if !report.restored.is_empty()
        || !report.retired.is_empty()
        || report.expired > 0
        || report.payments != PaymentsReport::default()
        || report.moves_applied > 0
        || !report.ends_repaired.is_empty()
    {
        tracing::info!(?report, "sweep");
    }
    Ok(report)
}

/// A step's outcome, or nothing once its failure is said: the next pass tries it again, and
/// the rest of this one goes on.
fn next_pass_if_not<T: Default, E: std::fmt::Display>(step: &str, outcome: Result<T, E>) -> T {
    outcome.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "{step}: left to the next pass");
        T::default()
    })
}

/// Live sales whose Redis state is gone, preloaded again, and those left unchecked (a master
/// changed, an admin's edit whose process died before it reconciled), reconciled: a sale
/// nobody buys from is set right too.
async fn restore_lost(core: &Core) -> Result<Vec<VoucherId>, SweepError> {
    let live = store::vouchers::live_since(&core.db, Utc::now()).await?;
    if live.is_empty() {
        return Ok(Vec::new());
    }
    let mut redis = core.redis.clone();
    let registered: std::collections::HashSet<i64> =
        redis.smembers(core.keys.preloaded_vouchers()).await?;
    // One check per sale (a script that writes nothing), all in flight at once: their keys
    // live in different slots.
    let states = futures::future::join_all(live.iter().map(|v| catalog::check(core, v.id))).await;
    let mut restored = Vec::new();
    for (v, state) in live.iter().zip(states) {
        let state = match state {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!(voucher = %v.id, error = %e, "checking a sale in Redis: left to the next pass");
                continue;
            }
        };
        let checked = matches!(state, PreloadOutcome::AlreadyLoaded { .. });
        if checked && registered.contains(&v.id.get()) {
            continue;
        }
        match catalog::preload(core, v).await {
            Ok(_) => restored.push(v.id),
            Err(e) => tracing::error!(voucher = %v.id, error = %e, "restoring a sale"),
        }
    }
    Ok(restored)
}

/// Finished sales with nothing left to write, their Redis state deleted; and how many finished
/// sales past the grace period still have orders to write (the worker drains them first).
async fn retire_finished(core: &Core) -> Result<(Vec<VoucherId>, usize), SweepError> {
    let mut redis = core.redis.clone();
    let registry = core.keys.preloaded_vouchers();
    let grace = u64::try_from(core.config.sweep.retire_after.as_millis()).unwrap_or(u64::MAX);
    let registered: Vec<i64> = redis.smembers(&registry).await?;
    let (mut retired, mut draining) = (Vec::new(), 0);
    for id in registered
        .into_iter()
        .filter_map(|id| VoucherId::try_from(id).ok())
    {
        let retirement = match scripts::retire(&mut redis, &core.keys.voucher(id), grace).await {
            Ok(retirement) => retirement,
            Err(e) => {
                tracing::warn!(voucher = %id, error = %e, "retiring a sale: left to the next pass");
                continue;
            }
        };
        match retirement {
            Retirement::Retired | Retirement::Absent => {
                let _: () = redis.srem(&registry, id.get()).await?;
                retired.push(id);
            }
            Retirement::StillQueued { orders } => {
                tracing::warn!(voucher = %id, orders, "sale ended but orders are still queued");
                draining += 1;
            }
            Retirement::NotDue { .. } => {}
        }
    }
    Ok((retired, draining))
}

/// Orders past their payment deadline cancelled, their units given back; how many.
async fn expire_unpaid(core: &Core, fence: i64) -> Result<usize, SweepError> {
    let mut expired = 0;
    loop {
        let due = store::orders::lifecycle::expire_due(&core.db, JOB, fence, EXPIRE_BATCH).await?;
        let Ok(cancelled) = due else {
            tracing::warn!("a newer sweep holds the fence; this one stops cancelling");
            break;
        };
        expired += cancelled.len();
        metrics::counter!("seckill_orders_cancelled_total", "by" => "deadline")
            .increment(cancelled.len() as u64);
        for (voucher, step) in &cancelled {
            if let Err(e) = restock::apply(core, *voucher, step).await {
                // Still pending in the outbox: the pending-moves step or the next pass applies it.
                tracing::warn!(%voucher, error = %e, "returning an expired order's unit");
            }
        }
        if (cancelled.len() as i64) < EXPIRE_BATCH {
            break;
        }
    }
    Ok(expired)
}

/// Ends in Redis every preloaded sale whose PostgreSQL end is earlier than Redis's (an admin
/// ended it and the process died before Redis heard).
async fn repair_ends(core: &Core) -> Result<Vec<VoucherId>, SweepError> {
    let mut redis = core.redis.clone();
    let registered: Vec<i64> = redis.smembers(core.keys.preloaded_vouchers()).await?;
    let ids: Vec<VoucherId> = registered
        .into_iter()
        .filter_map(|id| VoucherId::try_from(id).ok())
        .collect();
    let ends = store::vouchers::ends(&core.db, &ids).await?;
    let in_redis = futures::future::join_all(ids.iter().map(|v| {
        let mut redis = core.redis.clone();
        let sale = core.keys.voucher(*v).sale;
        async move { redis.hget::<_, _, Option<i64>>(sale, "ends_ms").await }
    }))
    .await;
    let mut repaired = Vec::new();
    for (v, redis_end) in ids.into_iter().zip(in_redis) {
        let redis_end = match redis_end {
            Ok(end) => end,
            Err(e) => {
                tracing::warn!(voucher = %v, error = %e, "reading a sale's end in Redis: left to the next pass");
                continue;
            }
        };
        let (Some(db_end), Some(redis_end)) = (ends.get(&v), redis_end) else {
            continue;
        };
        if db_end.timestamp_millis() < redis_end {
            let keys = core.keys.voucher(v);
            match scripts::end_sale(&mut redis, &keys, db_end.timestamp_millis()).await {
                Ok(_) => repaired.push(v),
                Err(e) => {
                    tracing::warn!(voucher = %v, error = %e, "ending a sale in Redis: left to the next pass")
                }
            }
        }
    }
    Ok(repaired)
}

/// Offers to run the job every `SECKILL_SWEEP_MS` until `shutdown`.
pub async fn run(core: Core, shutdown: CancellationToken) {
    // Start-up already preloaded the live sales (`catalog::preload_live`): first pass one period on.
    let period = core.config.sweep.every;
    let mut every = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = every.tick() => {}
        }
        match sweep_once(&core).await {
            Err(e) if e.is_unavailable() => {
                tracing::warn!(error = %e, "sweep skipped: a store is unreachable");
            }
            Err(e) => tracing::error!(error = %e, "sweep failed"),
            Ok(_) => {}
        }
    }
}
