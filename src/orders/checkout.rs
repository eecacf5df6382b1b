//! After the rush, the shopper's side: paying an order before its deadline, or cancelling it
//! (its unit goes back on sale, and the shopper may buy again). Both are conditional
//! transitions in PostgreSQL (`store::orders::lifecycle`); a cancellation's unit reaches Redis
//! through the stock-move outbox ([`crate::orders::restock`]).

use crate::{
    domain::{Canceller, IdempotencyKey, OrderId, OrderStatus, UserId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        store::{self, orders::lifecycle::Current},
    },
    orders::payment::{Charge, PaymentError},
    orders::restock,
    sale, Core,
};

/// Why a payment or a cancellation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// No such order of this shopper's (someone else's answers the same, I7).
    #[error("no such order")]
    NotFound,
    /// Not yet written: it can be paid or cancelled in a moment.
    #[error("the order is still being written")]
    StillQueued,
    /// The worker refused it: there is nothing to pay or cancel.
    #[error("the order failed")]
    Failed,
    /// Paying an order that was cancelled (by the shopper or the deadline).
    #[error("the order was cancelled")]
    Cancelled,
    /// Paying after the deadline (the sweep is about to cancel it).
    #[error("the payment deadline has passed")]
    Expired,
    /// Cancelling a paid order, or paying it again with another key.
    #[error("the order is paid")]
    AlreadyPaid,
    #[error("the payment was declined: {0}")]
    Declined(String),
    #[error("payment: {0}")]
    PaymentUnavailable(String),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(CheckoutError);

impl Unavailable for CheckoutError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            // No provider answered: the same payment may go through shortly.
            Self::PaymentUnavailable(_) => true,
            Self::NotFound
            | Self::StillQueued
            | Self::Failed
            | Self::Cancelled
            | Self::Expired
            | Self::AlreadyPaid
            | Self::Declined(_) => false,
        }
    }
}

/// Pays `order` with the client's idempotency key: the same key again answers the same
/// (success); the order's row stays locked while the provider charges, so neither the deadline
/// nor a cancellation can slip in between.
pub async fn pay(
    core: &Core,
    shopper: UserId,
    order: OrderId,
    key: &IdempotencyKey,
) -> Result<(), CheckoutError> {
    let mut tx = core.db.begin().await?;
    let current = store::orders::lifecycle::lock_for_update(&mut tx, order, shopper).await?;
    let price_cents = match current {
        None => return Err(not_written(core, shopper, order).await),
        Some(Current::Paid { key: paid_with }) if paid_with.as_deref() == Some(key.as_str()) => {
            return Ok(())
        }
        Some(Current::Paid { .. }) => return Err(CheckoutError::AlreadyPaid),
        Some(Current::Cancelled) => return Err(CheckoutError::Cancelled),
        Some(Current::Created { overdue: true, .. }) => return Err(CheckoutError::Expired),
        Some(Current::Created { price_cents, .. }) => price_cents,
    };
    let reference = core
        .payments
        .charge(Charge {
            order,
            amount_cents: price_cents,
            key,
        })
        .await
        .map_err(|e| match e {
            PaymentError::Declined(why) => CheckoutError::Declined(why),
            PaymentError::Unavailable(why) => CheckoutError::PaymentUnavailable(why),
        })?;
    store::orders::lifecycle::mark_paid(&mut tx, order, key, &reference).await?;
    tx.commit().await?;
    metrics::counter!("seckill_orders_paid_total").increment(1);
    tracing::info!(%order, "order paid");
    Ok(())
}

/// Cancels `order` for its shopper; cancelling a cancelled order changes nothing (success).
/// Its unit is given back in PostgreSQL in the same transaction, then in Redis at once (or by
/// the sweep, if this process dies first).
pub async fn cancel(core: &Core, shopper: UserId, order: OrderId) -> Result<(), CheckoutError> {
    let mut tx = core.db.begin().await?;
    let voucher = match store::orders::lifecycle::lock_for_update(&mut tx, order, shopper).await? {
        None => return Err(not_written(core, shopper, order).await),
        Some(Current::Cancelled) => return Ok(()),
        Some(Current::Paid { .. }) => return Err(CheckoutError::AlreadyPaid),
        Some(Current::Created { voucher, .. }) => voucher,
    };
    let step = store::orders::lifecycle::cancel_locked(
        &mut tx,
        order,
        shopper,
        voucher,
        Canceller::Shopper,
    )
    .await?;
    tx.commit().await?;
    metrics::counter!("seckill_orders_cancelled_total", "by" => "shopper").increment(1);
    if let Err(e) = restock::apply(core, voucher, &step).await {
        tracing::warn!(%order, error = %e, "returning a cancelled unit to Redis; the sweep will");
    }
    Ok(())
}

/// Why PostgreSQL has no written order `order` of `shopper`'s: still queued, failed, or none.
async fn not_written(core: &Core, shopper: UserId, order: OrderId) -> CheckoutError {
    match sale::order_status(core, shopper, order).await {
        Ok(Some(v)) => match v.status {
            OrderStatus::Queued => CheckoutError::StillQueued,
            OrderStatus::Failed { .. } => CheckoutError::Failed,
            // Written meanwhile: the client may simply try again.
            OrderStatus::Created { .. } | OrderStatus::Paid | OrderStatus::Cancelled { .. } => {
                CheckoutError::StillQueued
            }
        },
        Ok(None) => CheckoutError::NotFound,
        Err(e) => CheckoutError::Backend(e),
    }
}
