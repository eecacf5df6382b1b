//! The payment side of the sweep (one instance at a time, under its lock; see
//! `jobs::sweeper`), run before the deadline pass cancels what is unpaid:
//!
//! 1. **The deadline**: an order past its deadline whose payment is still open has it expired
//!    at the provider first; if the provider answers that it was paid, the payment wins and
//!    the order is paid, not cancelled. Otherwise the payment is closed and the deadline pass
//!    cancels the order. A provider out of reach holds the cancellation back for
//!    `SECKILL_STRIPE_EXPIRE_GRACE_MS` (10 minutes) past the deadline at most (a shopper who paid in the last seconds keeps
//!    the order); after that the order is cancelled anyway, and money that still arrives is
//!    refunded. Open payments of orders already cancelled (a Pay now that raced the
//!    cancellation) are expired the same way.
//! 2. **Refunds owed** whose turn has come are made (idempotent at the provider), each retried
//!    with its own backoff; one the provider refuses for good becomes `refund_failed` for an
//!    admin, and none waits behind another.
//! 3. **Lost webhooks**: open payments not heard of for a minute are looked up, least recently
//!    asked first, at most [`LOOKUPS_PER_PASS`] a pass (a provider limits its API's rate:
//!    Stripe's is about 100 requests a second), so a paid order is marked paid within a few
//!    sweeps even if every webhook is dropped. So are payments the shop closed without the
//!    provider's word (step 1's forced close), until the provider says they are over or their
//!    `expires_at` has passed: money they still take is refunded, webhook or not. Last, as
//!    the one that may take the rest of the budget: during a sale there are always payment
//!    pages left open, and a hundred lookups one after another once kept the deadlines and the
//!    refunds from ever running.
//!
//! The sweep cancels due orders that have no open payment before these steps, and gives them a
//! time budget: a slow provider delays only what it must answer (design.md decision 41).

use crate::{
    infra::{backend::Backend, store},
    orders::{
        payment::{PaymentError, SessionStatus},
        payment_word::{self, PaymentApplied, RefundTry},
    },
    Core,
};

/// Lookups of open payments per pass at most.
pub const LOOKUPS_PER_PASS: i64 = 100;
/// An open payment not heard of for this long is looked up (the webhook may be lost).
pub const LOOKUP_AFTER_MS: i64 = 60_000;
/// Open payments of due orders expired per pass at most (the rest wait for the next pass).
const EXPIRIES_PER_PASS: i64 = 200;
/// Refunds tried per pass at most.
const REFUNDS_PER_PASS: i64 = 100;

/// What the payment steps of one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PaymentsReport {
    /// Open payments asked of the provider.
    pub looked_up: usize,
    /// Orders found paid by a lookup or an expiry (their webhook had not come).
    pub paid_late: usize,
    /// Open payments of due orders closed (the orders are then cancelled).
    pub closed: usize,
    /// Due orders held back because the provider did not answer.
    pub held: usize,
    pub refunded: usize,
    /// Refunds the provider refused for good in this pass (now `refund_failed`).
    pub refunds_refused: usize,
}

/// The three steps, in order.
pub async fn run(core: &Core) -> Result<PaymentsReport, Backend> {
    let mut report = PaymentsReport::default();
    close_due(core, &mut report).await?;
    (report.refunded, report.refunds_refused) = refund_owed(core, REFUNDS_PER_PASS).await;
    look_up_stale(core, &mut report).await?;
    // Money the shop holds and owes back: an operator alerts on these staying up (the provider
    // out of reach, a key without the right to refund), and on refunds it refused for good.
    let (owed, oldest_secs) = store::payments::refunds_owed(&core.db).await?;
    metrics::gauge!("seckill_payments_refunds_owed").set(owed as f64);
    metrics::gauge!("seckill_payments_refund_owed_oldest_seconds").set(oldest_secs);
    let failed = store::payments::refunds_failed(&core.db).await?;
    metrics::gauge!("seckill_payments_refunds_failed").set(failed as f64);
    metrics::gauge!("seckill_payments_held_at_deadline").set(report.held as f64);
    Ok(report)
}

async fn look_up_stale(core: &Core, report: &mut PaymentsReport) -> Result<(), Backend> {
    let provider = core.payments.name();
    let stale =
        store::payments::stale_open(&core.db, provider, LOOKUP_AFTER_MS, LOOKUPS_PER_PASS).await?;
    for session in stale {
        store::payments::checked(&core.db, &session).await?;
        report.looked_up += 1;
        match core.payments.lookup(&session).await {
            Ok(state) => {
                if payment_word::apply(core, &state, None).await? == PaymentApplied::Paid {
                    report.paid_late += 1;
                }
            }
            Err(e @ PaymentError::Unavailable(_)) => {
                tracing::warn!(%session, error = %e, "looking up an open payment");
                // The provider is out of reach: the rest can wait for the next pass.
                break;
            }
            // This session's answer alone (the others may still be answered).
            Err(e) => tracing::warn!(%session, error = %e, "looking up an open payment"),
        }
    }
    Ok(())
}

async fn close_due(core: &Core, report: &mut PaymentsReport) -> Result<(), Backend> {
    // After one call finds the provider out of reach, the rest of the pass does not wait on it
    // (each call may take its timeout twice): they are held, or closed past the grace.
    let mut reachable = true;
    let grace = i64::try_from(core.config.payments.expire_grace.as_millis()).unwrap_or(i64::MAX);
    for due in store::payments::open_past_deadline(&core.db, EXPIRIES_PER_PASS).await? {
        let answer = if due.provider != core.payments.name() {
            Err(format!(
                "its provider {:?} is not the configured one",
                due.provider
            ))
        } else if !reachable {
            Err("the provider did not answer earlier in this pass".to_owned())
        } else {
            let answer = core.payments.expire(&due.session).await;
            reachable = !matches!(answer, Err(PaymentError::Unavailable(_)));
            answer.map_err(|e| e.to_string())
        };
        match answer {
            Ok(state) => match payment_word::apply(core, &state, None).await? {
                PaymentApplied::Paid => report.paid_late += 1,
                _ if state.status == SessionStatus::Open => {
                    tracing::warn!(session = %due.session, "the provider left an expired payment open");
                    report.held += 1;
                }
                _ => {
                    // Complete but unpaid (an asynchronous method pending): still watched.
                    let over = state.status == SessionStatus::Expired;
                    store::payments::close_if_open(&core.db, &due.session, !over).await?;
                    report.closed += 1;
                }
            },
            Err(why) if due.late_ms < grace => {
                tracing::warn!(session = %due.session, error = %why,
                    "cannot close a payment at its order's deadline; the order waits");
                report.held += 1;
            }
            Err(why) => {
                tracing::warn!(session = %due.session, error = %why,
                    "cannot close a payment past its order's deadline and grace; cancelling anyway (it stays watched: money that still arrives is refunded)");
                store::payments::close_if_open(&core.db, &due.session, true).await?;
                report.closed += 1;
            }
        }
    }
    Ok(())
}

/// Tries up to `limit` refunds owed whose turn has come; how many were made and how many the
/// provider refused for good. Each failure waits its own backoff: none stops the others.
pub async fn refund_owed(core: &Core, limit: i64) -> (usize, usize) {
    let due = match store::payments::refunds_due(&core.db, core.payments.name(), limit).await {
        Ok(due) => due,
        Err(e) => {
            tracing::warn!(error = %e, "reading the refunds owed");
            return (0, 0);
        }
    };
    let (mut made, mut refused) = (0, 0);
    for session in due {
        match payment_word::refund_now(core, &session).await {
            RefundTry::Made => made += 1,
            RefundTry::Refused => refused += 1,
            RefundTry::Later | RefundTry::NotDue => {}
        }
    }
    (made, refused)
}
