//! The housekeeping job. Every instance offers to run it every `SECKILL_SWEEP_MS`; the lock
//! `job:sweep` lets one instance at a time do it, and its fencing token is recorded in
//! PostgreSQL (`job_runs`), so an instance that paused past its lease cannot record a stale run.
//!
//! One pass:
//! 1. **Restore**: every voucher whose sale has not ended but whose Redis state is missing
//!    (Redis restarted without its data, a key was evicted) is preloaded again from PostgreSQL
//!    (see [`catalog::preload`]: remaining = PostgreSQL stock − orders still queued).
//! 2. **Retire**: a sale that ended more than `SECKILL_RETIRE_AFTER_MS` ago and has nothing left
//!    to write has its Redis state deleted and leaves the registry, so the worker stops reading
//!    its stream (`lua/retire.lua`). Its orders live on in PostgreSQL; dead letters are kept.

use std::time::Duration;

use chrono::Utc;
use redis::AsyncCommands;
use tokio_util::sync::CancellationToken;

use crate::{
    catalog,
    domain::VoucherId,
    faults::Unavailable,
    lock::LockError,
    scripts::{self, Retirement, ScriptError},
    store, Core,
};

/// The lock and `job_runs` name of this job.
pub const JOB: &str = "sweep";

/// A sweep failed; the next one tries again.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("lock: {0}")]
    Lock(#[from] LockError),
    #[error("postgres: {0}")]
    Store(#[from] sqlx::Error),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis: {0}")]
    Script(#[from] ScriptError),
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
        let _ = guard.release().await;
        return Ok(SweepOutcome::Fenced);
    }
    let report = sweep(core).await;
    if guard.is_lost() {
        tracing::warn!("sweep lock lost during the pass");
    }
    let report = report?;
    let recorded = serde_json::to_string(&report).unwrap_or_default();
    store::jobs::finish(&core.db, JOB, fence, &recorded).await?;
    if let Err(e) = guard.release().await {
        tracing::warn!(error = %e, "sweep lock release");
    }
    Ok(SweepOutcome::Ran(report))
}

async fn sweep(core: &Core) -> Result<SweepReport, SweepError> {
    let mut report = SweepReport::default();
    let mut redis = core.redis.clone();
    let registry = core.keys.preloaded_vouchers();

    // 1. Restore live sales whose Redis state is gone.
    let live = store::vouchers::live_since(&core.db, Utc::now()).await?;
    if !live.is_empty() {
        // One EXISTS per sale, all in flight at once: their keys live in different slots.
        let registered: std::collections::HashSet<i64> = redis.smembers(&registry).await?;
        let present = futures::future::try_join_all(live.iter().map(|v| {
            let mut redis = core.redis.clone();
            let stock = core.keys.voucher(v.id).stock;
            async move { redis.exists::<_, bool>(stock).await }
        }))
        .await?;
        for (v, stock) in live.iter().zip(present) {
            if stock && registered.contains(&v.id.get()) {
                continue;
            }
            match catalog::preload(core, v).await {
                Ok(_) => report.restored.push(v.id),
                Err(e) => tracing::error!(voucher = %v.id, error = %e, "restoring a sale"),
            }
        }
    }

    // 2. Retire finished, drained sales.
    let grace = u64::try_from(core.config.sweep.retire_after.as_millis()).unwrap_or(u64::MAX);
    let registered: Vec<i64> = redis.smembers(&registry).await?;
    for id in registered
        .into_iter()
        .filter_map(|id| VoucherId::try_from(id).ok())
    {
        match scripts::retire(&mut redis, &core.keys.voucher(id), grace).await? {
            Retirement::Retired | Retirement::Absent => {
                let _: () = redis.srem(&registry, id.get()).await?;
                report.retired.push(id);
            }
            Retirement::StillQueued { orders } => {
                tracing::warn!(voucher = %id, orders, "sale ended but orders are still queued");
                report.draining += 1;
            }
            Retirement::NotDue { .. } => {}
        }
    }
    if !report.restored.is_empty() || !report.retired.is_empty() {
        tracing::info!(?report, "sweep");
    }
    Ok(report)
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
