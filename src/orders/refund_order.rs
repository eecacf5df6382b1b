//! The admin's hand on the money (design.md decision 41): an admin refunds an order, and
//! lists the payments that need one.
//!
//! Refunding a paid order cancels it **by the shop** in one transaction (its unit goes back on
//! sale as a cancellation's does, its shopper may buy again) and makes every payment that took
//! money for it owed back; the refunds are then made at once, within [`REFUND_WAIT`], and
//! otherwise by the sweep. The order reads "Payment refunded" to its shopper. Asking again
//! answers where the money stands; an order nothing was paid for is refused.

use std::time::Duration;

use crate::{
    auth::Admin,
    domain::OrderId,
    infra::{
        backend::{backend_error, Backend, Unavailable},
        store::{self, orders::lifecycle::Current},
    },
    orders::{payment_word, restock},
    Core,
};

pub use crate::infra::store::payments::{PaymentFilter, PaymentListed, PaymentState};

/// How long an admin's request waits for the provider's refunds before answering "pending".
const REFUND_WAIT: Duration = Duration::from_secs(5);

/// Where an admin's refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundState {
    /// Owed, not made yet (the provider is slow, or refused: see the payments listing).
    Pending,
    /// Every payment taken for the order went back.
    Refunded,
}

impl RefundState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "refund_pending",
            Self::Refunded => "refunded",
        }
    }
}

/// Why an admin's refund was refused.
#[derive(Debug, thiserror::Error)]
pub enum AdminRefundError {
    /// No written order has that ID.
    #[error("no such order")]
    NotFound,
    /// Nothing was paid for it (awaiting payment, free, or cancelled without money).
    #[error("nothing was paid for this order")]
    NotPaid,
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(AdminRefundError);

impl crate::auth::audit::ActionError for AdminRefundError {
    fn refusal_code(&self) -> Option<&'static str> {
        match self {
            Self::NotFound => Some("not_found"),
            Self::NotPaid => Some("not_paid"),
            Self::Backend(_) => None,
        }
    }
}

impl Unavailable for AdminRefundError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::NotFound | Self::NotPaid => false,
        }
    }
}

/// `admin` refunds `order`; an audit line names them.
pub async fn refund_order(
    core: &Core,
    admin: &Admin,
    order: OrderId,
) -> Result<RefundState, AdminRefundError> {
    let result = refund_checked(core, order).await;
    crate::auth::audit::admin_action(
        core,
        admin.user(),
        "refund order",
        order,
        &result.as_ref().map(|s| s.as_str()),
    )
    .await;
    result
}

async fn refund_checked(core: &Core, order: OrderId) -> Result<RefundState, AdminRefundError> {
    let mut tx = core.db.begin().await?;
    match store::orders::lifecycle::lock_any(&mut tx, order).await? {
        None => return Err(AdminRefundError::NotFound),
        Some(Current::Created { .. } | Current::Confirmed) => {
            return Err(AdminRefundError::NotPaid)
        }
        Some(Current::Paid) => {
            if let Some((voucher, step)) =
                store::orders::lifecycle::refund_paid(&mut tx, order).await?
            {
                tx.commit().await?;
                metrics::counter!("seckill_orders_cancelled_total", "by" => "shop").increment(1);
                if let Err(e) = restock::apply(core, voucher, &step).await {
                    tracing::warn!(%order, error = %e, "returning a refunded order's unit; the sweep will");
                }
            }
        }
        // Cancelled already: say where its money stands (a repeat, or money that came late).
        Some(Current::Cancelled) => drop(tx),
    }
    let due = store::payments::refunds_due_of_order(&core.db, order).await?;
    // Within a bound: the rest is the sweep's (each refund is idempotent at the provider).
    let _ = tokio::time::timeout(REFUND_WAIT, async {
        for session in &due {
            payment_word::refund_now(core, session).await;
        }
    })
    .await;
    match store::payments::refunds_of_order(&core.db, order).await? {
        (0, 0) => Err(AdminRefundError::NotPaid),
        (0, _) => Ok(RefundState::Refunded),
        _ => Ok(RefundState::Pending),
    }
}

/// How many payments a page of the listing holds.
pub const PAYMENTS_PAGE: i64 = 25;

/// A page (from 1) of the payments `filter` selects, newest change first, and how many there
/// are in all.
pub async fn payments(
    core: &Core,
    filter: PaymentFilter,
    page: i64,
) -> Result<(Vec<PaymentListed>, i64), Backend> {
    let offset = (page.max(1) - 1).saturating_mul(PAYMENTS_PAGE);
    Ok(store::payments::list(&core.db, filter, PAYMENTS_PAGE, offset).await?)
}
