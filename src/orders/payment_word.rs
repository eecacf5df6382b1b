//! What a payment provider says of a hosted payment, applied to the shop's books in one place
//! (design.md §2, decision 33), whoever heard it: the webhook, the shopper's return, the sweep's
//! lookup or the deadline's expiry. In one transaction, the order's row then the payment's row
//! locked in that order, the order every writer of both takes (paying, cancelling, the
//! deadline), so none of them can deadlock another:
//!
//! | the provider says | the order is | the shop does |
//! | --- | --- | --- |
//! | paid, the amount and currency due | awaiting payment (even past its deadline, not yet cancelled) | the order is `paid`: the payment wins |
//! | paid, the amount and currency due | cancelled, or already paid by another session | a refund is owed (`refund_due`), made at once (off the caller's path: a webhook answers without waiting for it) and retried by the sweep with backoff until done, or until the provider refuses it for good (`refund_failed`, for an admin): a cancelled order never comes back to life |
//! | paid, another amount or currency | awaiting payment | not paid: the payment is `flagged` for the admins (its shopper is told), and owed back (`refund_due`) once the order is paid another way or cancelled |
//! | paid, another amount or currency | paid, confirmed or cancelled | a refund is owed (`refund_due`), made at once |
//! | expired, or its asynchronous payment failed | awaiting payment | the session is `closed`; the order waits for another payment until its deadline |
//! | expired | any, the payment closed by the shop without the provider's word | it is no longer watched |
//! | still open | | nothing (its last check is noted) |
//!
//! Applying the same word twice changes nothing (the payment's state says it was applied); a
//! notification's ID is recorded in the same transaction, so a replay is recognised even when
//! it arrives after a crash between the commit and the answer.

use crate::{
    infra::{
        backend::Backend,
        store::{
            self,
            orders::lifecycle::Current,
            payments::{PaymentRow, PaymentState},
        },
    },
    orders::payment::{Notification, PaymentError, SessionState, SessionStatus},
    Core,
};

/// What applying a provider's word did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentApplied {
    /// The order is paid now.
    Paid,
    /// Money arrived for an order that cannot take it: a refund is owed (and was tried).
    RefundOwed,
    /// Money arrived that does not match the order: held for the admins.
    Flagged,
    /// The session ended without money; the order may be paid another way until its deadline.
    Closed,
    /// Nothing new: still open, or already applied.
    Unchanged,
    /// A notification seen before (its ID is recorded): nothing applied.
    Replay,
    /// No payment of this shop's has that session (another shop's on the same account, or a
    /// forged but validly signed test event): acknowledged, nothing changes.
    Unknown,
}

/// Applies `state` (and records `notification`, when it came as one) to the books.
pub async fn apply(
    core: &Core,
    state: &SessionState,
    notification: Option<&Notification>,
) -> Result<PaymentApplied, Backend> {
    let mut tx = core.db.begin().await?;
    if let Some(n) = notification {
        let first = store::payments::first_delivery(
            &mut tx,
            core.payments.name(),
            &n.event_id,
            &n.kind,
            Some(&state.session),
        )
        .await?;
        if !first {
            return Ok(PaymentApplied::Replay);
        }
    }
    // The payment's order never changes: read it unlocked, lock the order, then the payment.
    let Some(order) = store::payments::order_of(&mut tx, &state.session).await? else {
        tx.commit().await?;
        return Ok(PaymentApplied::Unknown);
    };
    let current = store::orders::lifecycle::lock_any(&mut tx, order).await?;
    let Some(row) = store::payments::lock(&mut tx, &state.session).await? else {
        tx.commit().await?;
        return Ok(PaymentApplied::Unknown);
    };
    if state.paid || state.status == SessionStatus::Expired {
        // The provider's last word on it: a payment closed by the shop alone is watched no more.
        store::payments::unwatch(&mut tx, &row.session).await?;
    }
    let mut owed_back = Vec::new();
    let outcome = if state.paid {
        let outcome = money_arrived(&mut tx, &row, current, state).await?;
        if outcome == PaymentApplied::Paid {
            // Money held that did not match the order pays nothing now: it goes back.
            owed_back = store::payments::owe_back_flagged(&mut tx, &[row.order.as_i64()]).await?;
        }
        outcome
    } else if state.status == SessionStatus::Expired && row.state == PaymentState::Open {
        store::payments::set_state(&mut tx, &row.session, PaymentState::Closed, None, None).await?;
        PaymentApplied::Closed
    } else {
        // Still open (or already applied): nothing to write; the lookups that get here noted
        // their check before asking.
        PaymentApplied::Unchanged
    };
    tx.commit().await?;
    match outcome {
        PaymentApplied::Paid => {
            metrics::counter!("seckill_orders_paid_total").increment(1);
            tracing::info!(order = %row.order, session = %row.session, "order paid");
            if !owed_back.is_empty() {
                tracing::warn!(order = %row.order, sessions = ?owed_back,
                    "money held that did not match the order goes back now it is paid");
                // Off the caller's path; the sweep makes any this does not.
                let (owner, core) = (core.clone(), core.clone());
                owner.spawn(async move {
                    for session in owed_back {
                        refund_now(&core, &session).await;
                    }
                });
            }
        }
        PaymentApplied::RefundOwed => {
            tracing::warn!(order = %row.order, session = %row.session,
                "a payment arrived for an order that cannot take it; refunding");
            // Not on the caller's path: a webhook answers at once (the provider wants a quick
            // 2xx) and a slow provider holds nobody. The sweep makes it if this does not.
            let (owner, core, session) = (core.clone(), core.clone(), row.session.clone());
            owner.spawn(async move {
                refund_now(&core, &session).await;
            });
        }
        _ => {}
    }
    Ok(outcome)
}

/// Money taken for payment `row`, whose order (locked) is `order`.
async fn money_arrived(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    row: &PaymentRow,
    order: Option<Current>,
    state: &SessionState,
) -> Result<PaymentApplied, Backend> {
    match row.state {
        PaymentState::Open | PaymentState::Closed => {}
        PaymentState::Paid
        | PaymentState::Flagged
        | PaymentState::RefundDue
        | PaymentState::RefundFailed
        | PaymentState::Refunded => return Ok(PaymentApplied::Unchanged),
    }
    // A provider that names no reference for the money is referred to by its session.
    let reference = state.payment_ref.as_deref().unwrap_or(&state.session);
    if state.amount_cents != row.amount_cents || state.currency != row.currency {
        let why = format!(
            "{} {} arrived, {} {} due",
            state.amount_cents, state.currency, row.amount_cents, row.currency
        );
        // Held for the admins while the order can still be paid; owed back at once when it
        // cannot any more (paid another way, or cancelled): it will never pay anything.
        if matches!(order, Some(Current::Created { .. }) | None) {
            tracing::warn!(target: "audit", order = %row.order, session = %row.session, mismatch = %why,
                "payment flagged: it does not match the order, which stays unpaid");
            metrics::counter!("seckill_payments_flagged_total").increment(1);
            store::payments::set_state(
                tx,
                &row.session,
                PaymentState::Flagged,
                Some(reference),
                Some(&why),
            )
            .await?;
            return Ok(PaymentApplied::Flagged);
        }
        tracing::warn!(target: "audit", order = %row.order, session = %row.session, mismatch = %why,
            "a payment that does not match an order that cannot take money any more; refunding");
        store::payments::set_state(
            tx,
            &row.session,
            PaymentState::RefundDue,
            Some(reference),
            Some(&why),
        )
        .await?;
        return Ok(PaymentApplied::RefundOwed);
    }
    match order {
        Some(Current::Created { .. }) => {
            store::orders::lifecycle::mark_paid(tx, row.order, &row.session, reference).await?;
            store::payments::set_state(tx, &row.session, PaymentState::Paid, Some(reference), None)
                .await?;
            Ok(PaymentApplied::Paid)
        }
        Some(Current::Paid | Current::Confirmed | Current::Cancelled) | None => {
            store::payments::set_state(
                tx,
                &row.session,
                PaymentState::RefundDue,
                Some(reference),
                None,
            )
            .await?;
            Ok(PaymentApplied::RefundOwed)
        }
    }
}

/// What one try at a refund owed came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundTry {
    Made,
    /// Not owed (any more): made meanwhile by another try.
    NotDue,
    /// It did not go through: tried again after its backoff.
    Later,
    /// The provider refused it for good: `refund_failed`, for an admin.
    Refused,
}

/// Makes the refund owed for payment `session`, if one is, and records what came of it. Never
/// an error: a failure is recorded against this payment alone, which waits its backoff while
/// every other refund goes on. The idempotency key moves on only after an answer the provider
/// may have saved as a failure (a 5xx, none), and the provider never refunds a payment twice,
/// so a refund is made at most once (M3).
pub async fn refund_now(core: &Core, session: &str) -> RefundTry {
    let owed = match store::payments::refund_owed_of(&core.db, session).await {
        Ok(Some(owed)) => owed,
        Ok(None) => return RefundTry::NotDue,
        Err(e) => {
            tracing::warn!(session, error = %e, "reading a refund owed");
            return RefundTry::Later;
        }
    };
    let reference = owed.payment_ref.as_deref().unwrap_or(session);
    let key = match owed.key_gen {
        0 => format!("seckill-refund-{session}"),
        n => format!("seckill-refund-{session}-{n}"),
    };
    let (outcome, recorded) = match core.payments.refund(reference, &key).await {
        Ok(()) => {
            tracing::info!(target: "audit", session, payment = reference, "payment refunded");
            (
                RefundTry::Made,
                store::payments::mark_refunded(&core.db, session).await,
            )
        }
        Err(PaymentError::Declined { code, .. }) if code == "charge_already_refunded" => {
            // The money is back: an earlier try whose answer was lost (why the key moved on)
            // went through, or an admin refunded it by hand on the provider's dashboard.
            tracing::info!(target: "audit", session, payment = reference, key_gen = owed.key_gen,
                "payment refunded (already, by an earlier try or by hand)");
            (
                RefundTry::Made,
                store::payments::mark_refunded(&core.db, session).await,
            )
        }
        Err(e) if e.is_refusal() => {
            tracing::warn!(target: "audit", session, payment = reference, error = %e,
                "the payment provider refused a refund owed for good; an admin must act");
            metrics::counter!("seckill_payments_refunds_refused_total").increment(1);
            (
                RefundTry::Refused,
                store::payments::refund_refused(&core.db, session, &e.to_string()).await,
            )
        }
        Err(e) => {
            tracing::warn!(session, error = %e, "a refund owed is not made yet; tried again later");
            let indeterminate = matches!(e, PaymentError::Unavailable(_));
            (
                RefundTry::Later,
                store::payments::refund_later(&core.db, session, indeterminate, &e.to_string())
                    .await,
            )
        }
    };
    if outcome == RefundTry::Made {
        metrics::counter!("seckill_payments_refunded_total").increment(1);
    }
    if let Err(e) = recorded {
        // The provider's idempotency makes the next try (after the backoff) safe.
        tracing::warn!(session, error = %e, "recording a refund's outcome");
        return RefundTry::Later;
    }
    outcome
}
