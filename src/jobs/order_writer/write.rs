//! Writing a set of deliveries to PostgreSQL: undecodable or too-often-delivered entries go to
//! the dead letters, the rest are written in one transaction, falling back to one per order when
//! the batch fails, so one poisoned order does not hold up the others.

use super::{settle::Decided, worker::hold, Delivery, Worker, WorkerReport};
use crate::{
    domain::FailureReason,
    infra::{
        backend::Backend,
        store::orders::{self, DeadLettered, Decision, QueuedOrder},
    },
};

impl Worker {
    /// Writes and settles a set of deliveries.
    pub async fn handle(&mut self, deliveries: Vec<Delivery>) -> Result<WorkerReport, Backend> {
        self.wait_for_replicas(&deliveries).await?;
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
                    let reason = FailureReason::DeadLetter {
                        deliveries: u32::try_from(d.deliveries - 1).unwrap_or(u32::MAX),
                    };
                    match orders::dead_letter(&self.core.db, q, reason).await? {
                        // Written on an earlier delivery whose settling failed (a store out of
                        // reach, a sale being reconciled): settled as written, never given back.
                        DeadLettered::Written => {
                            self.settle(&[Decided::written(&d, *q)]).await?;
                            report.written += 1;
                        }
                        // Settled by the reason PostgreSQL holds: one decided on an earlier
                        // delivery (sold out, already bought) gives back what it gives back.
                        DeadLettered::Failed(held) => {
                            self.settle(&[Decided::failed(&d, *q, held)]).await?;
                            report.dead_lettered += 1;
                            metrics::counter!("seckill_orders_dead_lettered_total").increment(1);
                        }
                    }
                }
                Ok(q) => fresh.push((d.clone(), *q)),
            }
        }
        if fresh.is_empty() {
            return Ok(report);
        }
        let batch: Vec<QueuedOrder> = fresh.iter().map(|(_, q)| *q).collect();
        match self.write_when_reachable(&batch).await {
            Ok(decisions) => report.add(self.settle_decisions(&fresh, &decisions).await?),
            Err(e) => {
                tracing::warn!(error = %e, size = fresh.len(), "batch write failed; writing one by one");
                for one in &fresh {
                    match orders::write_batch(
                        &self.core.db,
                        &[one.1],
                        self.core.config.payments.pay_within,
                    )
                    .await
                    {
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

    /// Writes a batch; while PostgreSQL cannot be reached, keeps the batch in hand and tries
    /// again every [`BACKOFF_MAX`](super::worker::BACKOFF_MAX) at most (until shutdown), so
    /// an outage neither spends the entries' deliveries nor waits for the reclaim bound once
    /// PostgreSQL is back.
    async fn write_when_reachable(&self, batch: &[QueuedOrder]) -> Result<Vec<Decision>, Backend> {
        let (db, pay_within) = (&self.core.db, self.core.config.payments.pay_within);
        hold(&self.shutdown, "PostgreSQL unreachable", || async move {
            Ok(orders::write_batch(db, batch, pay_within).await?)
        })
        .await
    }
}
