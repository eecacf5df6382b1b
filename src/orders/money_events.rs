//! What the provider says of money after it was taken (design.md decision 41): a refund the
//! provider confirms or reports failed, a dispute opened, won or lost. Each event is applied
//! once (its ID recorded in the same transaction) to the payment its money belongs to:
//!
//! | the provider says | the payment is | the shop does |
//! | --- | --- | --- |
//! | a refund succeeded | owed a refund, or its refund was refused (an admin refunded in the dashboard) | `refunded` |
//! | a refund failed | refunded, or owed one | `refund_failed`: the money is still the shopper's, an admin must act |
//! | a refund succeeded or failed | paid (a refund the shop did not ask for) | nothing changes; an audit line for the admins |
//! | a dispute opened, won or lost | any | its `dispute` says so; an open or lost one counts among the console's flagged payments |

use crate::{
    infra::{backend::Backend, store},
    orders::payment::{DisputeStatus, MoneyEvent, Notification, RefundOutcome},
    Core,
};

/// What applying an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    Refunded,
    RefundFailed,
    Disputed(DisputeStatus),
    /// Nothing to change (already so, a refund still pending, or one the shop did not ask for).
    Unchanged,
    /// An event seen before.
    Replay,
    /// No payment of this shop's took that money.
    Unknown,
}

/// Applies `event`, which came as `notification`.
pub async fn apply(
    core: &Core,
    event: &MoneyEvent,
    notification: &Notification,
) -> Result<Applied, Backend> {
    let mut tx = core.db.begin().await?;
    let first = store::payments::first_delivery(
        &mut tx,
        core.payments.name(),
        &notification.event_id,
        &notification.kind,
        None,
    )
    .await?;
    if !first {
        return Ok(Applied::Replay);
    }
    let Some((session, state)) = store::payments::lock_by_ref(&mut tx, event.payment_ref()).await?
    else {
        tx.commit().await?;
        return Ok(Applied::Unknown);
    };
    use store::payments::PaymentState as S;
    let applied = match *event {
        MoneyEvent::Refund {
            outcome: RefundOutcome::Succeeded,
            ..
        } => match state {
            S::RefundDue | S::RefundFailed => {
                store::payments::mark_refunded(&mut *tx, &session).await?;
                Applied::Refunded
            }
            S::Paid | S::Flagged => {
                tracing::warn!(target: "audit", %session, event = %notification.event_id,
                    "the provider refunded a payment the shop did not ask to; an admin should look");
                Applied::Unchanged
            }
            S::Open | S::Closed | S::Refunded => Applied::Unchanged,
        },
        MoneyEvent::Refund {
            outcome: RefundOutcome::Failed,
            ..
        } => match state {
            S::RefundDue | S::Refunded => {
                tracing::warn!(target: "audit", %session, event = %notification.event_id,
                    "a refund failed at the provider; the money is still owed, an admin must act");
                metrics::counter!("seckill_payments_refunds_refused_total").increment(1);
                store::payments::refund_refused(
                    &mut *tx,
                    &session,
                    "the refund failed at the provider",
                )
                .await?;
                Applied::RefundFailed
            }
            _ => Applied::Unchanged,
        },
        MoneyEvent::Refund {
            outcome: RefundOutcome::Pending,
            ..
        } => Applied::Unchanged,
        MoneyEvent::Dispute { status, .. } => {
            tracing::warn!(target: "audit", %session, event = %notification.event_id,
                dispute = status.as_str(), "a payment is disputed");
            if status == DisputeStatus::Open {
                metrics::counter!("seckill_payments_disputed_total").increment(1);
            }
            store::payments::set_dispute(&mut tx, &session, status.as_str()).await?;
            Applied::Disputed(status)
        }
    };
    tx.commit().await?;
    Ok(applied)
}
