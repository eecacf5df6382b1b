//! The order writer: blocks on the voucher streams, writes batches to PostgreSQL, settles.

use std::{collections::HashSet, time::Duration};

use redis::{
    aio::MultiplexedConnection,
    streams::{
        StreamAutoClaimOptions, StreamAutoClaimReply, StreamPendingCountReply, StreamReadOptions,
        StreamReadReply,
    },
    AsyncCommands,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Delivery;
use crate::{
    domain::VoucherId,
    keys::ORDER_GROUP,
    scripts::{self, ScriptError, SettleEntry, Settlement},
    store::orders::{self, Decision, QueuedOrder, RejectReason, DEAD_LETTER_PREFIX},
    Core,
};

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
    fn add(&mut self, other: Self) {
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
    core: Core,
    /// Its own connection: `XREADGROUP BLOCK` would stall the shared one.
    conn: MultiplexedConnection,
    consumer: String,
    groups_ready: HashSet<VoucherId>,
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

    /// The vouchers whose streams to read; makes sure each has the consumer group.
    pub async fn vouchers(&mut self) -> Result<Vec<VoucherId>, WorkerError> {
        let mut redis = self.core.redis.clone();
        let ids: Vec<i64> = redis.smembers(self.core.keys.preloaded_vouchers()).await?;
        let mut vouchers: Vec<VoucherId> = ids.into_iter().map(VoucherId::from_db).collect();
        vouchers.sort_unstable();
        for v in &vouchers {
            if self.groups_ready.contains(v) {
                continue;
            }
            let stream = self.core.keys.voucher(*v).orders;
            let created: Result<(), redis::RedisError> = redis
                .xgroup_create_mkstream(&stream, ORDER_GROUP, "0")
                .await;
            match created {
                Ok(()) => {}
                Err(e) if e.code() == Some("BUSYGROUP") => {}
                Err(e) => return Err(e.into()),
            }
            self.groups_ready.insert(*v);
        }
        Ok(vouchers)
    }

    /// New entries for this consumer (`>`), blocking up to `block` when there are none.
    pub async fn read_new(
        &mut self,
        block: Option<Duration>,
    ) -> Result<Vec<Delivery>, WorkerError> {
        self.read(">", block).await.map(|d| {
            d.into_iter()
                .map(|mut d| {
                    d.deliveries = 1;
                    d
                })
                .collect()
        })
    }

    /// Entries this consumer was handed before and has not settled (after a restart).
    pub async fn read_own_pending(&mut self) -> Result<Vec<Delivery>, WorkerError> {
        let mut all = self.read("0", None).await?;
        self.fill_delivery_counts(&mut all).await?;
        Ok(all)
    }

    async fn read(
        &mut self,
        from: &str,
        block: Option<Duration>,
    ) -> Result<Vec<Delivery>, WorkerError> {
        let vouchers = self.vouchers().await?;
        if vouchers.is_empty() {
            if let Some(b) = block {
                tokio::time::sleep(b).await;
            }
            return Ok(Vec::new());
        }
        let streams: Vec<String> = vouchers
            .iter()
            .map(|v| self.core.keys.voucher(*v).orders)
            .collect();
        let ids = vec![from; streams.len()];
        let mut opts = StreamReadOptions::default()
            .group(ORDER_GROUP, &self.consumer)
            .count(self.core.config.worker.batch_size);
        if let Some(b) = block {
            opts = opts.block(usize::try_from(b.as_millis()).unwrap_or(usize::MAX));
        }
        let reply: Result<Option<StreamReadReply>, redis::RedisError> =
            self.conn.xread_options(&streams, &ids, &opts).await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) if e.code() == Some("NOGROUP") => {
                // A stream vanished (Redis lost state): recreate groups on the next pass.
                self.groups_ready.clear();
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for (voucher, key) in vouchers.iter().zip(&streams) {
            let Some(sk) = reply
                .as_ref()
                .and_then(|r| r.keys.iter().find(|k| &k.key == key))
            else {
                continue;
            };
            out.extend(
                sk.ids
                    .iter()
                    .map(|e| Delivery::decode(*voucher, e.id.clone(), &e.map, 0)),
            );
        }
        Ok(out)
    }

    /// Claims entries that have been pending with any consumer (a crashed one, or this one after
    /// a failed write) for longer than the reclaim bound.
    pub async fn reclaim(&mut self) -> Result<Vec<Delivery>, WorkerError> {
        let cfg = self.core.config.worker.clone();
        let min_idle = u64::try_from(cfg.reclaim_idle.as_millis()).unwrap_or(u64::MAX);
        let mut all = Vec::new();
        for v in self.vouchers().await? {
            let stream = self.core.keys.voucher(v).orders;
            let reply: StreamAutoClaimReply = self
                .conn
                .xautoclaim_options(
                    &stream,
                    ORDER_GROUP,
                    &self.consumer,
                    min_idle,
                    "0-0",
                    StreamAutoClaimOptions::default().count(cfg.batch_size),
                )
                .await?;
            all.extend(
                reply
                    .claimed
                    .iter()
                    .map(|e| Delivery::decode(v, e.id.clone(), &e.map, 0)),
            );
        }
        self.fill_delivery_counts(&mut all).await?;
        if !all.is_empty() {
            tracing::info!(count = all.len(), consumer = %self.consumer, "reclaimed pending orders");
        }
        Ok(all)
    }

    /// Reads each entry's delivery count from the pending list.
    async fn fill_delivery_counts(
        &mut self,
        deliveries: &mut [Delivery],
    ) -> Result<(), WorkerError> {
        for d in deliveries.iter_mut() {
            let stream = self.core.keys.voucher(d.voucher).orders;
            let reply: StreamPendingCountReply = self
                .conn
                .xpending_consumer_count(
                    &stream,
                    ORDER_GROUP,
                    &d.entry_id,
                    &d.entry_id,
                    1,
                    &self.consumer,
                )
                .await?;
            d.deliveries = reply.ids.first().map_or(1, |p| p.times_delivered as u64);
        }
        Ok(())
    }

    /// Writes and settles a set of deliveries: undecodable or too-often-delivered entries go to
    /// the dead letters, the rest are written in one transaction (falling back to one per order
    /// when the batch fails, so one poisoned order does not hold up the others).
    pub async fn handle(&mut self, deliveries: Vec<Delivery>) -> Result<WorkerReport, WorkerError> {
        let mut report = WorkerReport::default();
        let max = u64::from(self.core.config.worker.max_deliveries);
        let mut fresh = Vec::new();
        for d in deliveries {
            match &d.order {
                Err(why) => {
                    self.dead_letter_undecodable(&d, why).await?;
                    report.dead_lettered += 1;
                }
                Ok(q) if d.deliveries > max => {
                    let reason = format!(
                        "{DEAD_LETTER_PREFIX}: gave up after {} deliveries",
                        d.deliveries - 1
                    );
                    orders::record_failure(&self.core.db, q, &reason).await?;
                    self.settle(&[(&d, *q, Settlement::DeadLetter, reason.as_str())])
                        .await?;
                    report.dead_lettered += 1;
                    metrics::counter!("seckill_orders_dead_lettered_total").increment(1);
                }
                Ok(q) => fresh.push((d.clone(), *q)),
            }
        }
        if fresh.is_empty() {
            return Ok(report);
        }
        let batch: Vec<QueuedOrder> = fresh.iter().map(|(_, q)| *q).collect();
        match orders::write_batch(&self.core.db, &batch).await {
            Ok(decisions) => report.add(self.settle_decisions(&fresh, &decisions).await?),
            Err(e) => {
                tracing::warn!(error = %e, size = fresh.len(), "batch write failed; writing one by one");
                for one in &fresh {
                    match orders::write_batch(&self.core.db, &[one.1]).await {
                        Ok(decisions) => {
                            report.add(
                                self.settle_decisions(std::slice::from_ref(one), &decisions)
                                    .await?,
                            );
                        }
                        Err(e) => {
                            tracing::warn!(order = %one.1.order, deliveries = one.0.deliveries, error = %e, "order write failed; it stays pending");
                            report.left_pending += 1;
                        }
                    }
                }
            }
        }
        Ok(report)
    }

    async fn settle_decisions(
        &mut self,
        fresh: &[(Delivery, QueuedOrder)],
        decisions: &[Decision],
    ) -> Result<WorkerReport, WorkerError> {
        let mut report = WorkerReport::default();
        let mut entries = Vec::with_capacity(fresh.len());
        for ((d, q), decision) in fresh.iter().zip(decisions) {
            let (settlement, reason) = match decision {
                Decision::Write | Decision::AlreadyWritten => {
                    report.written += 1;
                    (Settlement::Written, "")
                }
                Decision::Reject(r) => {
                    report.rejected += 1;
                    (settlement_for(r.as_str()), r.as_str())
                }
                Decision::AlreadyFailed(r) => {
                    report.rejected += 1;
                    (settlement_for(r), r.as_str())
                }
            };
            entries.push((d, *q, settlement, reason));
        }
        self.settle(&entries).await?;
        metrics::counter!("seckill_orders_written_total").increment(report.written);
        metrics::counter!("seckill_orders_rejected_total").increment(report.rejected);
        Ok(report)
    }

    /// Settles entries in Redis, one script call per voucher.
    async fn settle(
        &mut self,
        entries: &[(&Delivery, QueuedOrder, Settlement, &str)],
    ) -> Result<(), WorkerError> {
        let mut vouchers: Vec<VoucherId> = entries.iter().map(|e| e.1.voucher).collect();
        vouchers.sort_unstable();
        vouchers.dedup();
        let mut redis = self.core.redis.clone();
        for v in vouchers {
            let of_v: Vec<SettleEntry<'_>> = entries
                .iter()
                .filter(|e| e.1.voucher == v)
                .map(|(d, q, settlement, reason)| SettleEntry {
                    entry_id: &d.entry_id,
                    order: q.order,
                    user: q.user,
                    settlement: *settlement,
                    reason,
                })
                .collect();
            scripts::settle(&mut redis, &self.core.keys.voucher(v), &of_v).await?;
        }
        Ok(())
    }

    /// An entry that cannot be decoded cannot be retried into shape: straight to the dead letters.
    async fn dead_letter_undecodable(
        &mut self,
        d: &Delivery,
        why: &str,
    ) -> Result<(), WorkerError> {
        tracing::error!(entry = %d.entry_id, voucher = %d.voucher, why, "undecodable queue entry");
        let keys = self.core.keys.voucher(d.voucher);
        let mut redis = self.core.redis.clone();
        let _: () = redis::pipe()
            .atomic()
            .xadd(
                &keys.dead,
                "*",
                &[("entry", d.entry_id.as_str()), ("reason", why)],
            )
            .ignore()
            .xack(&keys.orders, ORDER_GROUP, &[&d.entry_id])
            .ignore()
            .xdel(&keys.orders, &[&d.entry_id])
            .ignore()
            .query_async(&mut redis)
            .await?;
        Ok(())
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

/// How a rejection recorded with `reason` gives back what its admission took.
fn settlement_for(reason: &str) -> Settlement {
    if reason == RejectReason::SoldOut.as_str() {
        Settlement::ReleaseBuyerOnly
    } else if reason == RejectReason::AlreadyBought.as_str() {
        Settlement::ReturnStockOnly
    } else if reason.starts_with(DEAD_LETTER_PREFIX) {
        Settlement::DeadLetter
    } else {
        Settlement::GiveBack
    }
}
