//! `SECKILL_DURABILITY=replicated`: an order reaches PostgreSQL only once a replica holds its
//! admission, so PostgreSQL never holds an order that a promoted replica lacks (design.md
//! decision 32).
//!
//! `WAIT` counts the replicas that acknowledged the master's offset at this connection's last
//! write. So before a batch is written, the worker makes one write of its own on the master of
//! each shard in the batch (`INCR` of the shard's replication mark), then `WAIT`s, in one
//! pipeline on its own connection: the mark comes after every admission the batch read, so the
//! replicas that acknowledge it hold them all. Fewer replicas in time: nothing is written, and
//! the batch is held and tried again with backoff (health reports the stall if it lasts).

use std::{collections::BTreeSet, time::Duration};

use super::{worker::BACKOFF_MAX, Delivery, Worker};
use crate::{
    domain::Shard,
    infra::backend::{Backend, Unavailable},
    Durability,
};

impl Worker {
    /// Waits until the admissions behind `deliveries` are on enough replicas (nothing to do
    /// unless `SECKILL_DURABILITY=replicated`). Like a PostgreSQL outage, a shard without its
    /// replicas holds the batch in hand (retried with backoff until shutdown) rather than
    /// spending the entries' deliveries: they are not faulty, only early.
    pub(super) async fn wait_for_replicas(
        &mut self,
        deliveries: &[Delivery],
    ) -> Result<(), Backend> {
        if self.core.config.durability != Durability::Replicated {
            return Ok(());
        }
        let shards: BTreeSet<Shard> = deliveries
            .iter()
            .map(|d| Shard::of_voucher(d.voucher))
            .collect();
        for shard in shards {
            let mut pause = Duration::from_millis(50);
            let mut warned = false;
            loop {
                match self.replicated_on(shard).await {
                    Err(e) if e.is_unavailable() && !self.shutdown.is_cancelled() => {
                        if !warned {
                            tracing::warn!(error = %e, %shard, "orders not on a replica yet; holding the batch");
                            warned = true;
                        }
                        tokio::select! {
                            () = self.shutdown.cancelled() => return Err(e),
                            () = tokio::time::sleep(pause) => {}
                        }
                        pause = (pause * 2).min(BACKOFF_MAX);
                    }
                    other => {
                        other?;
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// One `INCR` of `shard`'s mark and `WAIT`, in one pipeline on the worker's connection.
    async fn replicated_on(&mut self, shard: Shard) -> Result<(), Backend> {
        let wait = self.core.config.replicas;
        let (_, acked): (i64, i64) = redis::pipe()
            .incr(self.core.keys.replication_mark(shard), 1)
            .add_command(wait.command())
            .query_async(&mut self.conn)
            .await?;
        if wait.holds(acked) {
            return Ok(());
        }
        metrics::counter!("seckill_worker_unreplicated_total").increment(1);
        Err(Backend::NotReplicated {
            acked,
            wanted: wait.min_replicas,
        })
    }
}
