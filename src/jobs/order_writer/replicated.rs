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

use std::collections::BTreeSet;

use super::{worker::hold, Delivery, Worker};
use crate::{
    domain::Shard,
    infra::{backend::Backend, durability::ReplicaWait, keys::Keys, redis_conn::Redis},
    Durability,
};

impl Worker {
    /// Waits until the admissions behind `deliveries` are on enough replicas (nothing to do
    /// unless `SECKILL_DURABILITY=replicated`). Like a PostgreSQL outage, a shard without its
    /// replicas holds the batch in hand (retried with backoff until shutdown) rather than
    /// spending the entries' deliveries: they are not faulty, only early.
    pub(super) async fn wait_for_replicas(&self, deliveries: &[Delivery]) -> Result<(), Backend> {
        if self.core.config.durability != Durability::Replicated {
            return Ok(());
        }
        let shards: BTreeSet<Shard> = deliveries
            .iter()
            .map(|d| Shard::of_voucher(d.voucher))
            .collect();
        for shard in shards {
            let (keys, wait) = (&self.core.keys, self.core.config.replicas);
            let conn = self.conn.clone();
            let waiting = format!("orders of {shard} not on a replica yet");
            hold(&self.shutdown, &waiting, || {
                let mut conn = conn.clone();
                async move { replicated_on(&mut conn, keys, shard, wait).await }
            })
            .await?;
        }
        Ok(())
    }
}

/// One `INCR` of `shard`'s mark and `WAIT`, in one pipeline on the worker's connection.
async fn replicated_on(
    conn: &mut Redis,
    keys: &Keys,
    shard: Shard,
    wait: ReplicaWait,
) -> Result<(), Backend> {
    let (_, acked): (i64, i64) = redis::pipe()
        .incr(keys.replication_mark(shard), 1)
        .add_command(wait.command())
        .query_async(conn)
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
