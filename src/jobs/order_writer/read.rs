//! Reading the voucher streams: new entries, this consumer's own pending ones (after a
//! restart), and entries abandoned by any consumer (`XAUTOCLAIM`).

use std::{collections::BTreeMap, time::Duration};

use redis::{
    streams::{
        StreamAutoClaimOptions, StreamAutoClaimReply, StreamPendingCountReply, StreamReadOptions,
        StreamReadReply,
    },
    AsyncCommands,
};

use super::{Delivery, Worker};
use crate::{
    domain::{Shard, VoucherId},
    infra::{
        backend::Backend,
        keys::{Keys, ORDER_GROUP},
        redis_conn::Redis,
    },
};

/// The first pause of an idle worker on a Redis Cluster (where reads do not block); it doubles
/// while nothing arrives, up to [`IDLE_MAX`]: an order admitted into an idle queue waits at
/// most that long to be read.
pub(super) const IDLE_FIRST: Duration = Duration::from_millis(2);
pub(super) const IDLE_MAX: Duration = Duration::from_millis(25);

/// One `XREADGROUP` over the order streams of `vouchers` (on a cluster: of one shard).
async fn read_streams(
    mut conn: Redis,
    keys: &Keys,
    vouchers: &[VoucherId],
    from: &str,
    opts: &StreamReadOptions,
) -> Result<Vec<Delivery>, redis::RedisError> {
    let streams: Vec<String> = vouchers.iter().map(|v| keys.voucher(*v).orders).collect();
    let ids = vec![from; streams.len()];
    let reply: Option<StreamReadReply> = conn.xread_options(&streams, &ids, opts).await?;
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

impl Worker {
    /// The vouchers whose streams to read; makes sure each has the consumer group.
    pub async fn vouchers(&mut self) -> Result<Vec<VoucherId>, Backend> {
        let mut redis = self.core.redis.clone();
        let ids: Vec<i64> = redis.smembers(self.core.keys.preloaded_vouchers()).await?;
        let mut vouchers: Vec<VoucherId> = ids
            .into_iter()
            .filter_map(|id| match VoucherId::try_from(id) {
                Ok(v) => Some(v),
                Err(_) => {
                    tracing::warn!(id, "the preloaded-voucher registry holds a non-ID; skipped");
                    None
                }
            })
            .collect();
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
    pub async fn read_new(&mut self, block: Option<Duration>) -> Result<Vec<Delivery>, Backend> {
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
    pub async fn read_own_pending(&mut self) -> Result<Vec<Delivery>, Backend> {
        let mut all = self.read("0", None).await?;
        self.fill_delivery_counts(&mut all).await?;
        Ok(all)
    }

    async fn read(
        &mut self,
        from: &str,
        block: Option<Duration>,
    ) -> Result<Vec<Delivery>, Backend> {
        let vouchers = self.vouchers().await?;
        if vouchers.is_empty() {
            if let Some(b) = block {
                tokio::time::sleep(b).await;
            }
            return Ok(Vec::new());
        }
        let opts = StreamReadOptions::default()
            .group(ORDER_GROUP, &self.consumer)
            .count(self.core.config.worker.batch_size);
        let keys = &self.core.keys;
        let read = if self.conn.is_cluster() {
            // A Redis Cluster: a read may not span slots, and a blocking read would hold up
            // every other command to that master on this multiplexed connection. So one
            // non-blocking read per shard (its vouchers' streams share a slot), all in flight at
            // once; the idle pause below stands in for the block.
            let mut shards: BTreeMap<Shard, Vec<VoucherId>> = BTreeMap::new();
            for v in vouchers {
                shards.entry(Shard::of_voucher(v)).or_default().push(v);
            }
            let reads = shards
                .values()
                .map(|group| read_streams(self.conn.clone(), keys, group, from, &opts));
            futures::future::try_join_all(reads)
                .await
                .map(|all| all.into_iter().flatten().collect::<Vec<_>>())
        } else {
            // One node: every stream in one blocking read.
            let opts = match block {
                Some(b) => opts.block(usize::try_from(b.as_millis()).unwrap_or(usize::MAX)),
                None => opts,
            };
            read_streams(self.conn.clone(), keys, &vouchers, from, &opts).await
        };
        let out = match read {
            Ok(out) => out,
            Err(e) => {
                if e.code() == Some("NOGROUP") {
                    // A stream vanished (Redis lost state): recreate groups on the next pass.
                    self.groups_ready.clear();
                }
                return Err(e.into());
            }
        };
        if self.conn.is_cluster() {
            if let Some(b) = block {
                if out.is_empty() {
                    tokio::time::sleep(self.idle.min(b)).await;
                    self.idle = (self.idle * 2).min(IDLE_MAX);
                } else {
                    self.idle = IDLE_FIRST;
                }
            }
        }
        Ok(out)
    }

    /// Claims entries that have been pending with any consumer (a crashed one, or this one after
    /// a failed write) for longer than the reclaim bound.
    pub async fn reclaim(&mut self) -> Result<Vec<Delivery>, Backend> {
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
    async fn fill_delivery_counts(&mut self, deliveries: &mut [Delivery]) -> Result<(), Backend> {
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
}
