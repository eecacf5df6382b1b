//! `SECKILL_DURABILITY=replicated`: an order reaches PostgreSQL only once a replica holds its
//! admission, so PostgreSQL never holds an order that a promoted replica lacks (design.md
//! decision 32).
//!
//! `WAIT` counts the replicas that acknowledged the master's offset at this connection's last
//! write. So before a batch is written, the worker makes one write of its own on the master of
//! each shard in the batch (`INCR` of the shard's replication mark), then `WAIT`s, in one
//! pipeline on its own connection: the mark comes after every admission the batch read, so the
//! replicas that acknowledge it hold them all. Fewer replicas in time: the batch stays pending
//! and is tried again (the worker's backoff), nothing is written.

use std::collections::BTreeSet;

use super::{Delivery, Worker};
use crate::{domain::Shard, infra::backend::Backend, Durability};

impl Worker {
    /// Waits until the admissions behind `deliveries` are on enough replicas (nothing to do
    /// unless `SECKILL_DURABILITY=replicated`).
    pub(super) async fn wait_for_replicas(&mut self, deliveries: &[Delivery]) -> Result<(), Backend> {
        if self.core.config.durability != Durability::Replicated {
            return Ok(());
        }
        let wait = self.core.config.replicas;
        let shards: BTreeSet<Shard> = deliveries.iter().map(|d| Shard::of_voucher(d.voucher)).collect();
        for shard in shards {
            let (_, acked): (i64, i64) = redis::pipe()
                .incr(self.core.keys.replication_mark(shard), 1)
                .add_command(wait.command())
                .query_async(&mut self.conn)
                .await?;
            if !wait.holds(acked) {
                metrics::counter!("seckill_worker_unreplicated_total").increment(1);
                return Err(Backend::NotReplicated {
                    acked,
                    wanted: wait.min_replicas,
                });
            }
        }
        Ok(())
    }
}
