//! Settling decided entries in Redis (one `lua/settle.lua` call per voucher), and sending
//! entries that cannot be decoded to the dead letters.

use super::{Delivery, EntryError, Worker, WorkerReport};
use crate::{
    domain::{FailureReason, Settlement, VoucherId},
    infra::{
        backend::Backend,
        keys::ORDER_GROUP,
        scripts::{self, SettleEntry, Settled},
        store::orders::{Decision, QueuedOrder},
    },
};

/// An entry whose fate PostgreSQL has decided.
pub(super) struct Decided<'a> {
    delivery: &'a Delivery,
    order: QueuedOrder,
    /// `None`: written.
    failure: Option<FailureReason>,
}

impl<'a> Decided<'a> {
    pub(super) fn written(delivery: &'a Delivery, order: QueuedOrder) -> Self {
        Self {
            delivery,
            order,
            failure: None,
        }
    }

    pub(super) fn failed(
        delivery: &'a Delivery,
        order: QueuedOrder,
        reason: FailureReason,
    ) -> Self {
        Self {
            delivery,
            order,
            failure: Some(reason),
        }
    }

    fn settlement(&self) -> Settlement {
        self.failure
            .map_or(Settlement::Written, FailureReason::settlement)
    }
}

impl Worker {
    /// Settles a batch's entries by PostgreSQL's decisions, counting each kind.
    pub(super) async fn settle_decisions(
        &mut self,
        fresh: &[(Delivery, QueuedOrder)],
        decisions: &[Decision],
    ) -> Result<WorkerReport, Backend> {
        let mut report = WorkerReport::default();
        let decided: Vec<Decided<'_>> = fresh
            .iter()
            .zip(decisions)
            .map(|((d, q), decision)| match decision {
                Decision::Write | Decision::AlreadyWritten => {
                    report.written += 1;
                    Decided::written(d, *q)
                }
                Decision::Reject(r) | Decision::AlreadyFailed(r) => {
                    report.rejected += 1;
                    Decided::failed(d, *q, *r)
                }
            })
            .collect();
        self.settle(&decided).await?;
        metrics::counter!("seckill_orders_written_total").increment(report.written);
        metrics::counter!("seckill_orders_rejected_total").increment(report.rejected);
        Ok(report)
    }

    /// Settles entries in Redis, one script call per voucher.
    pub(super) async fn settle(&mut self, entries: &[Decided<'_>]) -> Result<(), Backend> {
        let mut vouchers: Vec<VoucherId> = entries.iter().map(|e| e.order.voucher).collect();
        vouchers.sort_unstable();
        vouchers.dedup();
        let redis = self.core.redis.clone();
        for v in vouchers {
            let of_v: Vec<SettleEntry<'_>> = entries
                .iter()
                .filter(|e| e.order.voucher == v)
                .map(|e| SettleEntry {
                    entry_id: &e.delivery.entry_id,
                    order: e.order.order,
                    user: e.order.user,
                    settlement: e.settlement(),
                    reason: e.failure.map(|r| r.to_string()).unwrap_or_default(),
                    built: &e.delivery.built,
                })
                .collect();
            let keys = self.core.keys.voucher(v);
            // The sale's master changed: check the sale against PostgreSQL (which holds these
            // orders now), then settle. Left pending if that cannot happen yet.
            let settled =
                crate::catalog::with_sale_staged::<crate::catalog::PreloadError, _, _, _>(
                    &self.core,
                    v,
                    |s| match s {
                        Settled::SaleUnreconciled => crate::catalog::Staged::Unreconciled,
                        Settled::SaleNotLoaded => crate::catalog::Staged::NotLoaded,
                        Settled::Entries(_) | Settled::SaleRebuiltSince(_) => {
                            crate::catalog::Staged::Ready
                        }
                    },
                    || {
                        let (mut redis, keys, of_v) = (redis.clone(), &keys, &of_v);
                        async move { scripts::settle(&mut redis, keys, of_v).await }
                    },
                )
                .await
                .map_err(crate::catalog::PreloadError::into_backend)?;
            match settled {
                // Left pending: the next delivery tries again.
                Settled::SaleUnreconciled | Settled::SaleNotLoaded => {
                    return Err(Backend::Unreconciled)
                }
                // Written while the sale was rebuilt without it: count it now, rather than at
                // the next buy (an instance that fails here leaves that to the next buy).
                Settled::SaleRebuiltSince(_) => {
                    tracing::warn!(voucher = %v, "an order was written after its sale was rebuilt: reconciling the sale");
                    if let Err(e) = crate::catalog::reconcile(&self.core, v).await {
                        tracing::warn!(voucher = %v, error = %e, "reconcile after a rebuild deferred to the next buy");
                    }
                }
                Settled::Entries(_) => {}
            }
            // A refused order gave its unit back: the sale may sell again.
            if of_v.iter().any(|e| e.settlement.returns_unit()) {
                crate::sale::announce_stock_back(&self.core, v).await;
            }
        }
        Ok(())
    }

    /// An entry that cannot be decoded cannot be retried into shape: straight to the dead letters.
    pub(super) async fn dead_letter_undecodable(
        &mut self,
        d: &Delivery,
        why: &EntryError,
    ) -> Result<(), Backend> {
        tracing::error!(entry = %d.entry_id, voucher = %d.voucher, %why, "undecodable queue entry");
        let keys = self.core.keys.voucher(d.voucher);
        let mut redis = self.core.redis.clone();
        let why = why.to_string();
        let _: () = redis::pipe()
            .atomic()
            .xadd(
                &keys.dead,
                "*",
                &[("entry", d.entry_id.as_str()), ("reason", why.as_str())],
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
}
