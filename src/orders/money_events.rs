//! What the provider says of money after it was taken (design.md decision 41): a refund the
//! provider confirms or reports failed, a dispute opened, won or lost. Each event is applied
//! once (its ID recorded in the same transaction) to the payment its money belongs to:
//!
//! | the provider says | the payment is | the shop does |
//! | --- | --- | --- |
//! | a refund succeeded | owed a refund, or its refund was refused (an admin refunded in the dashboard) | `refunded` |
//! | a refund failed | refunded, or owed one | `refund_failed`: the money is still the shopper's, an admin must act |
//! | a refund succeeded | flagged (money that did not match its order, refunded by an admin in the dashboard, perhaps in part) | owed back (`refund_due`): the shop's refund gives back what is left, or is answered `charge_already_refunded` and counts as made |
//! | a refund succeeded or failed | paid (a refund the shop did not ask for) | nothing changes; an audit line for the admins |
//! | a dispute opened, won or lost | any | its `dispute` says so; an open or lost one counts among the console's flagged payments |

use crate::{
    infra::{
        backend::Backend,
        store::{self, payments::PaymentState},
    },
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
    let event_id = notification.event_id.as_str();
    let applied = match *event {
        MoneyEvent::Refund {
            outcome: RefundOutcome::Succeeded,
            ..
        } => refund_succeeded(&mut tx, &session, state, event_id).await?,
        MoneyEvent::Refund {
            outcome: RefundOutcome::Failed,
            ..
        } => refund_failed(&mut tx, &session, state, event_id).await?,
        MoneyEvent::Refund {
            outcome: RefundOutcome::Pending,
            ..
        } => Applied::Unchanged,
        MoneyEvent::Dispute { status, .. } => {
            tracing::warn!(target: "audit", %session, event = event_id,
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

type Tx<'a> = sqlx::Transaction<'a, sqlx::Postgres>;

/// The provider refunded `session`'s payment: what the shop owed, or refunded by hand after a
/// refusal, is now refunded; money held that did not match its order, refunded by an admin
/// (perhaps in part: a refund's own event does not say it was the whole), is owed back, so the
/// shop's refund gives back what is left; a refund of a paid order's payment the shop never
/// asked for is only reported (the order stays paid).
async fn refund_succeeded(
    tx: &mut Tx<'_>,
    session: &str,
    state: PaymentState,
    event_id: &str,
) -> Result<Applied, Backend> {
    Ok(match state {
        PaymentState::RefundDue | PaymentState::RefundFailed => {
            store::payments::mark_refunded(&mut **tx, session).await?;
            Applied::Refunded
        }
        PaymentState::Flagged => {
            tracing::info!(target: "audit", %session, event = event_id,
                "money that did not match its order was refunded by hand; the shop refunds what is left");
            store::payments::owe_back_session(&mut **tx, session).await?;
            Applied::Unchanged
        }
        PaymentState::Paid => {
            tracing::warn!(target: "audit", %session, event = event_id,
                "the provider refunded a payment the shop did not ask to; an admin should look");
            Applied::Unchanged
        }
        PaymentState::Open | PaymentState::Closed | PaymentState::Refunded => Applied::Unchanged,
    })
}

/// The provider could not refund `session`'s payment: the money is still owed, and an admin
/// must act.
async fn refund_failed(
    tx: &mut Tx<'_>,
    session: &str,
    state: PaymentState,
    event_id: &str,
) -> Result<Applied, Backend> {
    match state {
        PaymentState::RefundDue | PaymentState::Refunded => {
            tracing::warn!(target: "audit", %session, event = event_id,
                "a refund failed at the provider; the money is still owed, an admin must act");
            metrics::counter!("seckill_payments_refunds_refused_total").increment(1);
            store::payments::refund_refused(
                &mut **tx,
                session,
                "the refund failed at the provider",
            )
            .await?;
            Ok(Applied::RefundFailed)
        }
        _ => Ok(Applied::Unchanged),
    }
}
