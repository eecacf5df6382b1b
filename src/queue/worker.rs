//! The order writer's loop: resumes its own pending entries, then reads, writes and settles
//! until shutdown, reclaiming what other consumers abandoned.

use std::{collections::HashSet, time::Duration};

use redis::aio::MultiplexedConnection;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Delivery;
use crate::{domain::VoucherId, scripts::ScriptError, Core};

/// A worker step failed; the entries in hand stay pending and are retried.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis: {0}")]
    Script(#[from] ScriptError),
    #[error("postgres: {0}")]
    Store(#[from] sqlx::Error),
}

/// What one [`Worker::handle`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerReport {
    pub written: u64,
    pub rejected: u64,
    pub dead_lettered: u64,
    /// Entries that failed this time and stay pending for a later delivery.
    pub left_pending: u64,
}

impl WorkerReport {
    pub(super) fn add(&mut self, other: Self) {
        self.written += other.written;
        self.rejected += other.rejected;
        self.dead_lettered += other.dead_lettered;
        self.left_pending += other.left_pending;
    }

    /// Entries taken off the queue for good.
    pub fn settled(&self) -> u64 {
        self.written + self.rejected + self.dead_lettered
    }
}

/// One consumer of the order group. Several instances each run one, named after the instance.
pub struct Worker {
    pub(super) core: Core,
    /// Its own connection: `XREADGROUP BLOCK` would stall the shared one.
    pub(super) conn: MultiplexedConnection,
    pub(super) consumer: String,
    /// Vouchers whose stream is known to have the consumer group.
    pub(super) groups_ready: HashSet<VoucherId>,
}

impl Worker {
    /// A worker consuming as `consumer`.
    pub async fn new(core: Core, consumer: impl Into<String>) -> Result<Self, WorkerError> {
        let timeout = core.config.worker.block + Duration::from_secs(5);
        let conn = core.dedicated_connection(timeout).await?;
        Ok(Self {
            core,
            conn,
            consumer: consumer.into(),
            groups_ready: HashSet::new(),
        })
    }

    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// Runs until `shutdown`, then returns after the batch in hand is settled.
    pub async fn run(mut self, shutdown: CancellationToken) {
        tracing::info!(consumer = %self.consumer, "order worker started");
        let cfg = self.core.config.worker.clone();
        let reclaim_every = (cfg.reclaim_idle / 2).max(Duration::from_millis(100));
        let mut next_reclaim = Instant::now();
        // A restarted instance resumes what it held before it stopped, at once.
        match self.read_own_pending().await {
            Ok(d) => self.handle_logged(d).await,
            Err(e) => tracing::error!(error = %e, "reading own pending orders"),
        }
        while !shutdown.is_cancelled() {
            if Instant::now() >= next_reclaim {
                match self.reclaim().await {
                    Ok(d) => self.handle_logged(d).await,
                    Err(e) => tracing::error!(error = %e, "reclaiming orders"),
                }
                next_reclaim = Instant::now() + reclaim_every;
            }
            match self.read_new(Some(cfg.block)).await {
                Ok(d) => self.handle_logged(d).await,
                Err(e) => {
                    tracing::error!(error = %e, "reading orders");
                    tokio::select! {
                        () = shutdown.cancelled() => {}
                        () = tokio::time::sleep(Duration::from_millis(500)) => {}
                    }
                }
            }
        }
        tracing::info!(consumer = %self.consumer, "order worker stopped");
    }

    async fn handle_logged(&mut self, deliveries: Vec<Delivery>) {
        if deliveries.is_empty() {
            return;
        }
        match self.handle(deliveries).await {
            Ok(r) if r.left_pending > 0 => tracing::warn!(?r, "some orders stay pending"),
            Ok(r) => tracing::debug!(?r, "orders settled"),
            Err(e) => tracing::error!(error = %e, "settling orders; they stay pending"),
        }
    }

    /// Handles everything currently readable or reclaimable, without blocking; for tests and
    /// tools that drive the worker step by step.
    pub async fn drain(&mut self) -> Result<WorkerReport, WorkerError> {
        let mut total = WorkerReport::default();
        loop {
            let mut batch = self.read_new(None).await?;
            batch.extend(self.reclaim().await?);
            if batch.is_empty() {
                return Ok(total);
            }
            total.add(self.handle(batch).await?);
        }
    }
}
