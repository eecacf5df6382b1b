//! The order writer's loop: resumes its own pending entries, then reads, writes and settles
//! until shutdown, reclaiming what other consumers abandoned.

use std::{collections::HashSet, time::Duration};

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Delivery;
use crate::{
    domain::VoucherId,
    infra::{
        backend::{Backend, Unavailable},
        redis_conn::Redis,
    },
    Core,
};

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
    /// Its own connection: `XREADGROUP BLOCK` would stall the shared one (on a cluster, its
    /// own connections to every master, read without blocking).
    pub(super) conn: Redis,
    /// The next idle pause on a cluster (see `read.rs`).
    pub(super) idle: Duration,
    pub(super) consumer: String,
    /// Vouchers whose stream is known to have the consumer group.
    pub(super) groups_ready: HashSet<VoucherId>,
    /// Cancelled at shutdown: a write waiting for PostgreSQL gives up then.
    pub(super) shutdown: CancellationToken,
}

/// The first pause after a failed step; each further one doubles, up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_millis(50);
/// The longest pause between two tries: a restarted Redis or PostgreSQL is noticed within it.
pub(super) const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// Runs `attempt` until it answers anything but a store out of reach, pausing between tries
/// (doubling up to [`BACKOFF_MAX`]) until `shutdown`: the batch in hand is held rather than
/// its entries' deliveries spent, and is on its way as soon as the store is back. `waiting`
/// says what is awaited, in one warning when the first try fails and one line when it is over.
pub(super) async fn hold<T, Fut>(
    shutdown: &CancellationToken,
    waiting: &str,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, Backend>
where
    Fut: std::future::Future<Output = Result<T, Backend>>,
{
    let mut pause = BACKOFF_FIRST;
    let mut warned = false;
    loop {
        match attempt().await {
            Err(e) if e.is_unavailable() && !shutdown.is_cancelled() => {
                if !warned {
                    tracing::warn!(error = %e, "{waiting}: holding the batch");
                    warned = true;
                }
                tokio::select! {
                    () = shutdown.cancelled() => return Err(e),
                    () = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(BACKOFF_MAX);
            }
            other => {
                if warned {
                    tracing::info!("{waiting}: over, the batch goes on");
                }
                return other;
            }
        }
    }
}

/// Whether a Redis error means the connection is gone and must be opened again.
fn connection_lost(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_timeout() || e.is_unrecoverable_error()
}

impl Worker {
    /// A worker consuming as `consumer`.
    pub async fn new(core: Core, consumer: impl Into<String>) -> Result<Self, Backend> {
        let conn = core
            .dedicated_connection(Self::reply_timeout(&core))
            .await?;
        Ok(Self {
            core,
            conn,
            idle: super::read::IDLE_FIRST,
            consumer: consumer.into(),
            groups_ready: HashSet::new(),
            shutdown: CancellationToken::new(),
        })
    }

    /// How long a reply on the dedicated connection may take: a blocking read, plus slack.
    fn reply_timeout(core: &Core) -> Duration {
        core.config.worker.block + Duration::from_secs(5)
    }

    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// Runs until `shutdown`, then returns after the batch in hand is settled.
    ///
    /// Faults are normal here: when Redis goes away (a restart, a failover) the dedicated
    /// connection is opened again with backoff and this consumer's own pending entries are
    /// resumed at once; while PostgreSQL is away the batch in hand waits for it (see
    /// [`Worker::handle`]) instead of spending deliveries.
    pub async fn run(mut self, shutdown: CancellationToken) {
        tracing::info!(consumer = %self.consumer, "order worker started");
        self.shutdown = shutdown.clone();
        let cfg = self.core.config.worker.clone();
        let reclaim_every = (cfg.reclaim_idle / 2).max(Duration::from_millis(100));
        let mut next_reclaim = Instant::now();
        // A restarted instance resumes what it held before it stopped, at once.
        let mut resume_own = true;
        let mut backoff = BACKOFF_FIRST;
        while !shutdown.is_cancelled() {
            let step = if resume_own {
                self.read_own_pending().await
            } else if Instant::now() >= next_reclaim {
                next_reclaim = Instant::now() + reclaim_every;
                self.reclaim().await
            } else {
                self.read_new(Some(cfg.block)).await
            };
            match step {
                Ok(deliveries) => {
                    // Entries left pending (a failed settle) are this consumer's: take them
                    // back after a pause rather than after the reclaim bound.
                    resume_own = !self.handle_logged(deliveries).await;
                    if resume_own {
                        tokio::select! {
                            () = shutdown.cancelled() => {}
                            () = tokio::time::sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(BACKOFF_MAX);
                    } else {
                        backoff = BACKOFF_FIRST;
                    }
                }
                Err(e) => {
                    if self.recover(&e, backoff).await {
                        resume_own = true;
                    }
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
        tracing::info!(consumer = %self.consumer, "order worker stopped");
    }

    /// After a failed read: opens the dedicated connection again when it is gone (`true`), else
    /// pauses for `backoff`.
    async fn recover(&mut self, e: &Backend, backoff: Duration) -> bool {
        let lost = matches!(e, Backend::Redis(r) if connection_lost(r));
        if lost {
            tracing::warn!(error = %e, consumer = %self.consumer, "order queue connection lost; reconnecting");
        } else {
            tracing::warn!(error = %e, "reading orders failed; retrying");
        }
        tokio::select! {
            () = self.shutdown.cancelled() => return false,
            () = tokio::time::sleep(backoff) => {}
        }
        if !lost {
            return false;
        }
        match self
            .core
            .dedicated_connection(Self::reply_timeout(&self.core))
            .await
        {
            Ok(conn) => {
                self.conn = conn;
                // Redis may have come back without some streams: check the groups again.
                self.groups_ready.clear();
                tracing::info!(consumer = %self.consumer, "order queue connection restored");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "order queue still unreachable");
                false
            }
        }
    }

    /// Handles and logs; `false` when something was left pending on this consumer.
    async fn handle_logged(&mut self, deliveries: Vec<Delivery>) -> bool {
        if deliveries.is_empty() {
            return true;
        }
        match self.handle(deliveries).await {
            Ok(r) if r.left_pending > 0 => {
                tracing::warn!(?r, "some orders stay pending");
                false
            }
            Ok(r) => {
                tracing::debug!(?r, "orders settled");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "settling orders failed; they stay pending and are retried");
                false
            }
        }
    }

    /// Handles everything currently readable or reclaimable, without blocking; for tests and
    /// tools that drive the worker step by step.
    pub async fn drain(&mut self) -> Result<WorkerReport, Backend> {
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
